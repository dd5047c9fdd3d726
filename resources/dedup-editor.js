/*
 * Editor helpers shared by the pack's edit dialogs. Served by Node-RED at
 * resources/@telemetry-dedup/node-red-dedup/dedup-editor.js and loaded by
 * each node's .html before its registerType call.
 *
 * Defaults: every option's default, and the config version, are written once,
 * in the runtime (src/core/defaults.ts), which exports them as the
 * runtime setting `<camelCaseType>Defaults`; defaultsFor() reads them from
 * RED.settings, so the dialog of a new node and a hand-written flow mean the
 * same thing.
 *
 * Validators, TelemetryDedupEditor.check.*, are Node-RED 3.1+ validators,
 * `function (value, _opt)` called with the node as `this`: Node-RED tells
 * them from 2.x validators by their two parameters, so `_opt`, unused, must
 * stay (with one, the reason returned would count as valid). They return true,
 * or the reason the value is invalid, read from the node's own message
 * catalog under `<type>.validation.<name>` (and `<type>.label.<field>` for
 * the field's name), which the editor shows beside the red field.
 */
(function () {
    "use strict";
    var ENV_REFERENCE = /^\$\{[^}]+\}$/;

    function isEnvReference(value) {
        return typeof value === "string" && ENV_REFERENCE.test(value.trim());
    }

    function numberOrNaN(value) {
        if (typeof value === "number") { return value; }
        if (typeof value !== "string" || value.trim() === "") { return NaN; }
        return Number(value);
    }

    /** The value of a field while the dialog is open (a checkbox's state), else the node's saved property. */
    function current(node, property, configNode) {
        var field = $((configNode ? "#node-config-input-" : "#node-input-") + property);
        if (!field.length) { return node[property]; }
        return field.attr("type") === "checkbox" ? field.prop("checked") : field.val();
    }

    function isBlank(value) {
        return value === undefined || value === null || (typeof value === "string" && value.trim() === "");
    }

    function isPositive(value, whole) {
        if (isEnvReference(value)) { return true; }
        var n = numberOrNaN(value);
        return isFinite(n) && n > 0 && (!whole || Math.floor(n) === n);
    }

    /** A number as typed: not blank, and not a ${ENV} reference (its value is only known at run time). */
    function isNumber(value) {
        return !isBlank(value) && !isEnvReference(value) && isFinite(numberOrNaN(value));
    }

    function camelCase(type) {
        return type.replace(/-([a-z])/g, function (whole, letter) { return letter.toUpperCase(); });
    }

    /**
     * The `defaults` of a registerType call: one entry per option the runtime
     * exports (with its default value, and `version`), merged with `spec`,
     * which adds what the editor needs beyond the value (required, validate,
     * type). An option in spec that the runtime does not export is a mistake
     * in the pack, reported on the console rather than hidden.
     */
    function defaultsFor(type, spec) {
        var values = runtimeDefaults(type);
        var defaults = {};
        Object.keys(values).forEach(function (name) {
            defaults[name] = { value: values[name] };
        });
        Object.keys(spec || {}).forEach(function (name) {
            if (!Object.prototype.hasOwnProperty.call(values, name)) {
                console.warn("[" + type + "] the runtime exports no default for option " + name);
            }
            defaults[name] = $.extend({ value: values[name] }, spec[name]);
        });
        return defaults;
    }

    /** The runtime's defaults of a node type (and its config version), as exported to the editor. */
    function runtimeDefaults(type) {
        return (RED.settings && RED.settings[camelCase(type) + "Defaults"]) || {};
    }

    /**
     * A node without a config version was written by hand or by a script (or
     * pasted with only some of its options): the runtime reads every option it
     * leaves out as the default, and so must the dialog. A node that names an
     * older version keeps what it says, since its migration decides what a
     * missing option means (version 1 had no clock guard, for example).
     */
    function isUnversioned(node) {
        return !node || node.version === undefined || node.version === null || node.version === "";
    }

    /** An option's value, or the runtime's default when an unversioned node leaves it out. */
    function valueOf(node, name) {
        var value = node ? node[name] : undefined;
        if (value !== undefined && value !== null) { return value; }
        if (!isUnversioned(node)) { return value; }
        return node && node.type ? runtimeDefaults(node.type)[name] : undefined;
    }

    /**
     * Call first in oneditprepare, before typedInputs are built on the fields:
     * fills each field of an option the node leaves out with its default, so a
     * pasted node without a version opens showing what the runtime will do.
     * Node-RED has already put "" in those fields; nothing else is touched.
     */
    function showDefaults(node, configNode) {
        if (!node || !isUnversioned(node)) { return; }
        var values = runtimeDefaults(node.type);
        Object.keys(values).forEach(function (name) {
            var value = values[name];
            if (node[name] !== undefined && node[name] !== null) { return; }
            if (value === null || typeof value === "object") { return; }
            showInField($((configNode ? "#node-config-input-" : "#node-input-") + name), value);
        });
    }

    /** Puts a default into a dialog field: a checkbox ticked or not, any other field its text; no field, nothing. */
    function showInField(field, value) {
        if (!field.length) { return; }
        if (field.attr("type") === "checkbox") { field.prop("checked", value === true); }
        else { field.val(String(value)); }
    }

    /**
     * Call in oneditprepare, before typedInputs are built: shows the default
     * in each field of `names` that is blank (a checkbox: whose option is
     * absent), whatever the node's version, for options the runtime reads
     * the same blank or as their default (a path that falls back to its
     * default, a count that does; an option a newer version added, absent
     * from a node saved before it, whose migration gives the default).
     * Done then saves what the runtime would have read anyway.
     */
    function showBlanksAsDefaults(node, names) {
        var values = runtimeDefaults(node.type);
        names.forEach(function (name) {
            // A value the field cannot show (a select's unknown word) is left for its validator to mark.
            if (values[name] === undefined || !isBlank(node[name])) { return; }
            showInField($("#node-input-" + name), values[name]);
        });
    }

    /**
     * Whether any of the options `names` is set away from its default: a
     * folded section holding one opens, so that nothing set is hidden. A
     * blank or absent option counts as its default.
     */
    function setAwayFromDefault(node, names) {
        var values = runtimeDefaults(node.type);
        return names.some(function (name) {
            var value = node[name];
            if (isBlank(value)) { return false; }
            return String(value).trim() !== String(values[name]);
        });
    }

    /** Call in oneditsave: a node without a config version is saved with the current one. */
    function stampVersion(node) {
        if (node && isUnversioned(node)) {
            var version = runtimeDefaults(node.type).version;
            if (version !== undefined) { node.version = version; }
        }
    }

    /**
     * The reasons check.* can give: each is `<type>.validation.<name>` in the
     * catalog of every node that uses check.*, whichever validators it uses.
     */
    var REASONS = [
        "positive", "wholePositive", "nonNegative", "ttlShorterThanWindow", "redisNeeded", "redisMissing", "property",
        "propertyList", "readingPath", "numberOrBlank", "rangeReversed", "headingDegrees", "measures", "measureName", "keyProperty"
    ];

    /** A translated reason; plain false when the node cannot translate (never a stray key). */
    function reason(node, name, substitutions) {
        if (!node || typeof node._ !== "function" || !node.type) { return false; }
        var key = node.type + ".validation." + name;
        var text = node._(key, substitutions);
        return typeof text === "string" && text !== key && text !== "" ? text : false;
    }

    function fieldLabel(node, property) {
        if (!node || typeof node._ !== "function" || !node.type) { return property; }
        var key = node.type + ".label." + property;
        var text = node._(key);
        return typeof text === "string" && text !== key ? text : property;
    }

    /* ---------------------------------------------------------------- paths */

    /**
     * A property path inside a reading, as the runtime parses it
     * (src/core/parse/property-path.ts): names between dots, [index], ["quoted name"].
     * Returns the parts, or null when the path is not valid.
     */
    function parseReadingPath(text) {
        var source = typeof text === "string" ? text.trim() : "";
        if (source === "") { return null; }
        var parts = [];
        var at = 0;
        var expectName = true;
        while (at < source.length) {
            var ch = source.charAt(at);
            if (ch === "[") {
                at++;
                var quote = source.charAt(at);
                if (quote === "\"" || quote === "'") {
                    var value = "";
                    at++;
                    while (at < source.length && source.charAt(at) !== quote) {
                        if (source.charAt(at) === "\\" && at + 1 < source.length) { at++; }
                        value += source.charAt(at);
                        at++;
                    }
                    if (source.charAt(at) !== quote) { return null; }
                    at++;
                    parts.push(value);
                } else {
                    var digits = /^\d+/.exec(source.slice(at));
                    if (!digits) { return null; }
                    parts.push(Number(digits[0]));
                    at += digits[0].length;
                }
                if (source.charAt(at) !== "]") { return null; }
                at++;
                expectName = false;
                continue;
            }
            if (ch === ".") {
                if (expectName) { return null; }
                at++;
                expectName = true;
                continue;
            }
            if (!expectName) { return null; }
            var name = /^[^.[\]'"\s]+/.exec(source.slice(at));
            if (!name) { return null; }
            parts.push(/^\d+$/.test(name[0]) ? Number(name[0]) : name[0]);
            at += name[0].length;
            expectName = false;
        }
        return expectName ? null : parts;
    }

    /** The name a measured field has in the hashed JSON: the one given, else the path's last name. */
    function measureName(measure) {
        if (measure && !isBlank(measure.name)) { return String(measure.name).trim(); }
        var parts = parseReadingPath(measure && measure.path);
        return parts ? String(parts[parts.length - 1]) : "";
    }

    function isMsgPath(value) {
        return typeof value === "string" && value.trim() !== "" &&
            (!RED.utils || typeof RED.utils.validatePropertyExpression !== "function" || RED.utils.validatePropertyExpression(value.trim().replace(/^msg\./, "")));
    }

    /* ---------------------------------------------------------------- rules */

    function ttlIsLongEnough(node, ttl) {
        if (isEnvReference(ttl)) { return true; }
        var minSeconds = numberOrNaN(current(node, "minSeconds"));
        if (!isFinite(minSeconds) || isEnvReference(current(node, "minSeconds"))) { return true; }
        return numberOrNaN(ttl) >= minSeconds;
    }

    function redisState(node, value) {
        if (current(node, "store") !== "redis") { return "ok"; }
        if (typeof value !== "string" || value === "" || value === "_ADD_") { return "redisNeeded"; }
        if (typeof RED !== "undefined" && RED.nodes && typeof RED.nodes.node === "function" && !RED.nodes.node(value)) {
            return "redisMissing";
        }
        return "ok";
    }

    /** What is wrong with a list of measured fields, as [reason, substitutions], or null. */
    function measuresProblem(measures, tsField) {
        if (!Array.isArray(measures) || measures.length === 0) { return ["measures", {}]; }
        var tsParts = parseReadingPath(tsField);
        // The timestamp is hashed as "ts" whatever its path (src/core/sensor/reading.ts, TS_NAME).
        var tsName = "ts";
        var names = {};
        for (var i = 0; i < measures.length; i++) {
            var m = measures[i] || {};
            var parts = parseReadingPath(m.path);
            if (!parts) { return ["readingPath", { label: String(m.path || "") }]; }
            if (tsParts && JSON.stringify(parts) === JSON.stringify(tsParts)) { return ["measureIsTimestamp", { path: String(m.path).trim() }]; }
            var name = measureName(m);
            if (name === tsName || Object.prototype.hasOwnProperty.call(names, name)) {
                return ["measureName", { name: name }];
            }
            names[name] = true;
            if (!isBlank(m.min) && !isEnvReference(m.min) && !isFinite(numberOrNaN(m.min))) { return ["numberOrBlank", { label: String(m.min) }]; }
            if (!isBlank(m.max) && !isEnvReference(m.max) && !isFinite(numberOrNaN(m.max))) { return ["numberOrBlank", { label: String(m.max) }]; }
            if (isNumber(m.min) && isNumber(m.max) && numberOrNaN(m.min) > numberOrNaN(m.max)) {
                return ["rangeReversed", { min: String(m.min).trim(), max: String(m.max).trim() }];
            }
        }
        return null;
    }

    /* --------------------------------------------- check.*: with a reason */

    /** An option as a rule reads it: the field while the dialog is open, else the node's; blank or absent: its default. */
    function optionValue(node, name) {
        var value = current(node, name);
        return isBlank(value) ? runtimeDefaults(node.type)[name] : value;
    }

    var check = {
        /**
         * `validator`, applied only while `applies(option)` says the runtime
         * reads the field (e.g. a path only its mode or its rule uses):
         * `option(name)` is another option's value as the rule reads it.
         */
        when: function (applies, validator) {
            return function (value, _opt) {
                var node = this;
                var option = function (name) { return optionValue(node, name); };
                return applies(option) ? validator.call(node, value, _opt) : true;
            };
        },

        /** A number > 0 (or ${ENV}); options.whole for whole numbers, options.blankAllowed for an optional field. */
        positive: function (property, options) {
            var whole = !!(options && options.whole);
            var blankAllowed = !!(options && options.blankAllowed);
            return function (value, _opt) {
                if (blankAllowed && isBlank(value)) { return true; }
                if (isPositive(value, whole)) { return true; }
                return reason(this, whole ? "wholePositive" : "positive", { label: fieldLabel(this, property) });
            };
        },

        /** A number of 0 or more (or ${ENV}); blank allowed when options.blankAllowed. */
        nonNegative: function (property, options) {
            var blankAllowed = !!(options && options.blankAllowed);
            return function (value, _opt) {
                if (blankAllowed && isBlank(value)) { return true; }
                if (isEnvReference(value) || (isNumber(value) && numberOrNaN(value) >= 0)) { return true; }
                return reason(this, "nonNegative", { label: fieldLabel(this, property) });
            };
        },

        /** A turn threshold: blank (off), or more than 0 and at most 180 degrees. */
        headingDegrees: function (value, _opt) {
            if (isBlank(value) || isEnvReference(value)) { return true; }
            var n = numberOrNaN(value);
            return isNumber(value) && n > 0 && n <= 180 ? true : reason(this, "headingDegrees", {});
        },

        /** The TTL must be positive and outlive the window, or a parked asset is "first" every time. */
        ttlCoversWindow: function (value, _opt) {
            if (!isPositive(value, false)) {
                return reason(this, "positive", { label: fieldLabel(this, "ttlSeconds") });
            }
            if (ttlIsLongEnough(this, value)) { return true; }
            return reason(this, "ttlShorterThanWindow", { ttl: value, window: current(this, "minSeconds") });
        },

        /** The Redis store needs an existing dedup-redis config node. */
        redisConfig: function (value, _opt) {
            var state = redisState(this, value);
            return state === "ok" ? true : reason(this, state);
        },

        /** A msg property path such as payload.assetId or payload["asset id"]; blank allowed when options.blankAllowed. */
        msgProperty: function (property, options) {
            var blankAllowed = !!(options && options.blankAllowed);
            return function (value, _opt) {
                if (blankAllowed && isBlank(value)) { return true; }
                return isMsgPath(value) ? true : reason(this, "property", { label: fieldLabel(this, property) });
            };
        },

        /** msg property paths separated by commas, or blank. */
        msgPropertyList: function (property) {
            return function (value, _opt) {
                if (isBlank(value)) { return true; }
                var paths = String(value).split(",");
                for (var i = 0; i < paths.length; i++) {
                    if (!isMsgPath(paths[i])) { return reason(this, "propertyList", { label: fieldLabel(this, property), path: paths[i].trim() }); }
                }
                return true;
            };
        },

        /**
         * A property path inside the reading: uplink_message.f_cnt, rx[0].rssi, meta["battery level"];
         * or, when the field's type (options.typeProperty) is msg, a message property such as topic.
         */
        readingPath: function (property, options) {
            var typeProperty = options && options.typeProperty;
            return function (value, _opt) {
                if (current(this, "keyMode") === "property") { return true; }
                if (typeProperty && current(this, typeProperty) === "msg") {
                    return isMsgPath(value) ? true : reason(this, "property", { label: fieldLabel(this, property) });
                }
                return parseReadingPath(value) ? true : reason(this, "readingPath", { label: fieldLabel(this, property) });
            };
        },

        /** Key mode `property` needs the property (or expression) the key is read from. */
        keyProperty: function (value, _opt) {
            if (current(this, "keyMode") !== "property") { return true; }
            return !isBlank(value) ? true : reason(this, "keyProperty", {});
        },

        /** The measured fields: valid paths, distinct names (not the timestamp's), ranges in order. */
        measures: function (value, _opt) {
            if (current(this, "keyMode") === "property") { return true; }
            var problem = measuresProblem(value, current(this, "tsField"));
            return problem ? reason(this, problem[0], problem[1]) : true;
        }
    };

    /* ---------------------------------------------------- the State section */

    /**
     * The State section of the two dedup nodes' dialogs (the store, its
     * Redis connection, Forget after, the memory store's cap and saving, and
     * what a failing store does), written once. `{type}` is the node's type
     * (its catalog keys are its own), `{cap}` the option that caps the memory
     * store (maxAssets, maxKeys).
     */
    var STATE_SECTION = [
        '<h4 data-i18n="{type}.section.state"></h4>',
        '<div class="form-row">',
        '    <label for="node-input-store"><i class="fa fa-database"></i> <span data-i18n="{type}.label.store"></span></label>',
        '    <select id="node-input-store" style="width: calc(100% - 130px);">',
        '        <option value="memory" data-i18n="{type}.store.memory"></option>',
        '        <option value="redis" data-i18n="{type}.store.redis"></option>',
        '    </select>',
        '</div>',
        '<div class="form-tips dedup-note-memory" data-i18n="{type}.tip.memory"></div>',
        '<div class="form-row dedup-row-redis">',
        '    <label for="node-input-redis"><i class="fa fa-server"></i> <span data-i18n="{type}.label.redis"></span></label>',
        '    <input type="text" id="node-input-redis" style="width: calc(100% - 130px);">',
        '</div>',
        '<div class="form-row">',
        '    <label for="node-input-ttlSeconds"><i class="fa fa-hourglass-half"></i> <span data-i18n="{type}.label.ttlSeconds"></span></label>',
        '    <input type="text" id="node-input-ttlSeconds" style="width: 100px;"> <span data-i18n="{type}.hint.ttlSeconds"></span>',
        '</div>',
        '<div class="form-row dedup-note-memory">',
        '    <label for="node-input-{cap}"><i class="fa fa-compress"></i> <span data-i18n="{type}.label.{cap}"></span></label>',
        '    <input type="text" id="node-input-{cap}" style="width: 200px;">',
        '</div>',
        '<div class="form-row dedup-note-memory">',
        '    <label for="node-input-persistSeconds"><i class="fa fa-floppy-o"></i> <span data-i18n="{type}.label.persistSeconds"></span></label>',
        '    <input type="text" id="node-input-persistSeconds" style="width: 100px;"> <span data-i18n="{type}.hint.persistSeconds"></span>',
        '</div>',
        '<div class="form-row">',
        '    <label for="node-input-onStoreError"><i class="fa fa-exclamation-triangle"></i> <span data-i18n="{type}.label.onStoreError"></span></label>',
        '    <select id="node-input-onStoreError" style="width: calc(100% - 130px);">',
        '        <option value="admit" data-i18n="{type}.onStoreError.admit"></option>',
        '        <option value="error" data-i18n="{type}.onStoreError.error"></option>',
        '    </select>',
        '</div>'
    ].join("\n");

    /** Where a node's template wants the State section, naming its cap. */
    var STATE_PLACEHOLDER = /<div class="dedup-state-section" data-cap="(\w+)"><\/div>/;

    /**
     * Puts the State section into the edit template of `type` where it holds
     * the placeholder. Called as the node's editor file loads: the section
     * must be in the template itself, since Node-RED fills the fields from
     * the node (and makes the Redis field a config node select) before
     * oneditprepare. The editor puts a module's files in the page before it
     * runs their scripts; should a template come later, it is done once the
     * page has it.
     */
    function stateSection(type, tries) {
        var template = $('script[type="text/html"][data-template-name="' + type + '"]');
        if (!template.length) {
            if ((tries || 0) < 20) { setTimeout(function () { stateSection(type, (tries || 0) + 1); }, 0); }
            else { console.warn("[" + type + "] no edit template to put the State section into"); }
            return;
        }
        template.text(template.text().replace(STATE_PLACEHOLDER, function (placeholder, cap) {
            return STATE_SECTION.replace(/\{type\}/g, type).replace(/\{cap\}/g, cap);
        }));
    }

    /* ------------------------------------------------------ dialog wiring */

    /** Shows the Redis row only for the Redis store, and the memory rows only for memory. */
    function bindStoreSelector() {
        var select = $("#node-input-store");
        function update() {
            var redis = select.val() === "redis";
            $(".dedup-row-redis").toggle(redis);
            $(".dedup-note-memory").toggle(!redis);
            $("#node-input-redis").trigger("change");
        }
        select.on("change", update);
        update();
    }

    /** typedInputs limited to msg properties, one per id given. */
    function msgPropertyInputs(ids) {
        ids.forEach(function (id) {
            $("#node-input-" + id).typedInput({ types: ["msg"] });
        });
    }

    /** The typedInput type of a path inside a reading: labelled "reading.", checked as the runtime parses it. */
    var READING_TYPE = {
        value: "reading",
        label: "reading.",
        validate: function (v) { return !!parseReadingPath(v); }
    };

    function readingPathInputs(ids) {
        ids.forEach(function (id) {
            $("#node-input-" + id).typedInput({ types: [READING_TYPE], default: "reading" });
        });
    }

    /**
     * A path inside the reading, or a msg property (msg.topic) whose value
     * every reading of the message shares; its type is saved in the hidden
     * field `typeId` ("reading" or "msg").
     */
    function readingOrMsgInput(id, typeId) {
        var typeField = $("#node-input-" + typeId);
        if (typeField.val() !== "msg") { typeField.val("reading"); }
        $("#node-input-" + id).typedInput({ types: [READING_TYPE, "msg"], default: "reading", typeField: "#node-input-" + typeId });
    }

    /** Re-validates `dependent` whenever `source` changes (e.g. the TTL when the heartbeat changes). */
    function revalidateOnChange(source, dependent) {
        $("#node-input-" + source).on("change keyup input", function () {
            $("#node-input-" + dependent).trigger("change");
        });
    }

    /**
     * A heading that folds the rows under it (class `dedup-fold-<name>`) away, starting folded unless `open`.
     * Node-RED's i18n pass sets the text of an element with `data-i18n`, dropping whatever else it holds,
     * and may run after oneditprepare: so the text moves into a span of its own, beside the caret.
     */
    function foldingSection(name, open) {
        var heading = $("#dedup-fold-" + name);
        var rows = $(".dedup-fold-" + name);
        var key = heading.attr("data-i18n");
        var text = $("<span></span>").append(heading.contents());
        if (key) { text.attr("data-i18n", key); heading.removeAttr("data-i18n"); }
        var icon = $("<i class='fa fa-fw'></i>");
        heading.empty().append(icon, text);
        function show(visible) {
            rows.toggle(visible);
            icon.toggleClass("fa-caret-down", visible).toggleClass("fa-caret-right", !visible);
        }
        heading.css("cursor", "pointer").on("click", function () { show(!rows.first().is(":visible")); });
        show(!!open);
    }

    /**
     * The editable list of measured fields (path, optional name, valid
     * range). Saved by save() in oneditsave (an array cannot live in a
     * text input); while it is edited, what is wrong with it is shown under
     * it, in the words check.measures gives when the node is validated.
     */
    function measuresList(node, t) {
        var list = $("#node-input-measures-list");
        var problemTip = $("#dedup-measures-problem");
        function rows() {
            var out = [];
            list.editableList("items").each(function () {
                var row = $(this);
                out.push({
                    path: row.find(".dedup-measure-path").typedInput("value"),
                    name: row.find(".dedup-measure-name").val().trim(),
                    min: row.find(".dedup-measure-min").val().trim(),
                    max: row.find(".dedup-measure-max").val().trim()
                });
            });
            return out;
        }
        function changed() {
            var problem = measuresProblem(rows(), $("#node-input-tsField").typedInput("value"));
            var text = problem ? reason(node, problem[0], problem[1]) : "";
            problemTip.text(text || "").toggle(!!text);
        }
        list.editableList({
            addButton: t("label.addMeasure"),
            removable: true,
            sortable: true,
            height: "auto",
            addItem: function (container, index, data) {
                var row = $("<div class='dedup-measure-row'></div>").appendTo(container);
                var path = $("<input type='text' class='dedup-measure-path' style='width: 44%'>").appendTo(row);
                $("<span class='dedup-measure-as'></span>").text(" " + t("label.measureAs") + " ").appendTo(row);
                $("<input type='text' class='dedup-measure-name' style='width: 18%'>").attr("placeholder", t("placeholder.measureName")).val(data.name || "").appendTo(row);
                $("<input type='text' class='dedup-measure-min' style='width: 12%; margin-left: 6px'>").attr("placeholder", t("placeholder.min")).val(data.min === undefined ? "" : data.min).appendTo(row);
                $("<input type='text' class='dedup-measure-max' style='width: 12%; margin-left: 4px'>").attr("placeholder", t("placeholder.max")).val(data.max === undefined ? "" : data.max).appendTo(row);
                path.typedInput({ types: [READING_TYPE], default: "reading" });
                path.typedInput("value", data.path || "");
                row.find("input").on("change keyup input", changed);
                path.on("change", changed);
                changed();
            },
            removeItem: changed,
            sortItems: changed
        });
        var measures = valueOf(node, "measures");
        (Array.isArray(measures) ? measures : []).forEach(function (m) { list.editableList("addItem", m || {}); });
        $("#node-input-tsField").on("change", changed);
        changed();
        return {
            set: function (values) {
                list.editableList("empty");
                values.forEach(function (m) { list.editableList("addItem", m); });
                changed();
            },
            save: rows
        };
    }

    /* Wider labels than Node-RED's 100px, so "Movement (m)" and the like fit on one line. */
    if (!document.getElementById("telemetry-dedup-editor-style")) {
        var style = document.createElement("style");
        style.id = "telemetry-dedup-editor-style";
        style.textContent = ".dedup-form .form-row > label:first-child { width: 120px; }" +
            " .dedup-form .dedup-fold-heading { user-select: none; }" +
            " .dedup-measure-row { display: flex; align-items: center; }";
        document.head.appendChild(style);
    }

    window.TelemetryDedupEditor = {
        check: check,
        reasons: REASONS,
        defaultsFor: defaultsFor,
        valueOf: valueOf,
        showDefaults: showDefaults,
        showBlanksAsDefaults: showBlanksAsDefaults,
        setAwayFromDefault: setAwayFromDefault,
        stampVersion: stampVersion,
        isBlank: isBlank,
        isEnvReference: isEnvReference,
        measureName: measureName,
        bindStoreSelector: bindStoreSelector,
        msgPropertyInputs: msgPropertyInputs,
        readingPathInputs: readingPathInputs,
        readingOrMsgInput: readingOrMsgInput,
        revalidateOnChange: revalidateOnChange,
        foldingSection: foldingSection,
        measuresList: measuresList,
        stateSection: stateSection
    };
})();
