/*
 * Editor helpers shared by the dedup nodes' edit dialogs. Served by Node-RED
 * at resources/@telemetry-dedup/node-red-dedup/dedup-editor.js and loaded by
 * each node's .html before its registerType call.
 *
 * The validators, TelemetryDedupEditor.check.*, are Node-RED 3.1+ validators,
 * `function (value, opt)` called with the node as `this`. They return true, or
 * the reason the value is invalid, read from the node's own message catalog
 * under `<type>.validation.<name>` (and `<type>.label.<field>` for the field's
 * name), which the editor shows beside the red field.
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

    /** The value of a field while the dialog is open, else the node's saved property. */
    function current(node, property, configNode) {
        var field = $((configNode ? "#node-config-input-" : "#node-input-") + property);
        return field.length ? field.val() : node[property];
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

    /**
     * The reasons check.* can give: each is `<type>.validation.<name>` in the
     * catalog of every node that uses check.*, whichever validators it uses.
     */
    var REASONS = [
        "positive", "wholePositive", "ttlShorterThanWindow", "redisNeeded", "redisMissing", "property",
        "fieldName", "fieldList", "numberOrBlank", "rangeReversed"
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

    /* --------------------------------------------- check.*: with a reason */

    var check = {
        /** A number > 0 (or ${ENV}); options.whole for whole numbers, options.blankAllowed for an optional field. */
        positive: function (property, options) {
            var whole = !!(options && options.whole);
            var blankAllowed = !!(options && options.blankAllowed);
            return function (value, opt) {
                if (blankAllowed && (value === "" || value === undefined || value === null)) { return true; }
                if (isPositive(value, whole)) { return true; }
                return reason(this, whole ? "wholePositive" : "positive", { label: fieldLabel(this, property) });
            };
        },

        /** The TTL must be positive and outlive the window, or a parked asset is "first" every time. */
        ttlCoversWindow: function (value, opt) {
            if (!isPositive(value, false)) {
                return reason(this, "positive", { label: fieldLabel(this, "ttlSeconds") });
            }
            if (ttlIsLongEnough(this, value)) { return true; }
            return reason(this, "ttlShorterThanWindow", { ttl: value, window: current(this, "minSeconds") });
        },

        /** The Redis store needs an existing dedup-redis config node. */
        redisConfig: function (value, opt) {
            var state = redisState(this, value);
            return state === "ok" ? true : reason(this, state);
        },

        /** A msg property path such as payload.assetId or payload["asset id"]. */
        msgProperty: function (property) {
            return function (value, opt) {
                var valid = typeof value === "string" && value.trim() !== "" &&
                    (!RED.utils || typeof RED.utils.validatePropertyExpression !== "function" || RED.utils.validatePropertyExpression(value));
                return valid ? true : reason(this, "property", { label: fieldLabel(this, property) });
            };
        },

        /**
         * The name of one field inside the payload (not a msg path): not blank,
         * and without a comma, which separates the names of a list.
         */
        fieldName: function (property) {
            return function (value, opt) {
                var valid = typeof value === "string" && value.trim() !== "" && value.indexOf(",") === -1;
                return valid ? true : reason(this, "fieldName", { label: fieldLabel(this, property) });
            };
        },

        /** Field names separated by commas, at least one of them not blank. */
        fieldList: function (property) {
            return function (value, opt) {
                var names = typeof value === "string" ? value.split(",").filter(function (name) { return name.trim() !== ""; }) : [];
                return names.length > 0 ? true : reason(this, "fieldList", { label: fieldLabel(this, property) });
            };
        },

        /**
         * One end of an optional range: a number, blank for no bound, or ${ENV}.
         * `ends` names the other end, as { atMost: "<upper property>" } for the
         * lower end or { atLeast: "<lower property>" } for the upper end: when
         * both ends are numbers, the lower must not be above the upper.
         */
        bound: function (property, ends) {
            var lowerProperty = ends && ends.atLeast;
            var upperProperty = ends && ends.atMost;
            return function (value, opt) {
                if (!isBlank(value) && !isEnvReference(value) && !isFinite(numberOrNaN(value))) {
                    return reason(this, "numberOrBlank", { label: fieldLabel(this, property) });
                }
                var lower = lowerProperty ? current(this, lowerProperty) : value;
                var upper = upperProperty ? current(this, upperProperty) : value;
                if (isNumber(lower) && isNumber(upper) && numberOrNaN(lower) > numberOrNaN(upper)) {
                    return reason(this, "rangeReversed", { min: String(lower).trim(), max: String(upper).trim() });
                }
                return true;
            };
        }
    };

    /* ------------------------------------------------------ dialog wiring */

    /** Shows the Redis row only for the Redis store, and the memory note only for memory. */
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

    /** Re-validates `dependent` whenever `source` changes (e.g. the TTL when the heartbeat changes). */
    function revalidateOnChange(source, dependent) {
        $("#node-input-" + source).on("change keyup input", function () {
            $("#node-input-" + dependent).trigger("change");
        });
    }

    /* Wider labels than Node-RED's 100px, so "Movement (m)" and the like fit on one line. */
    if (!document.getElementById("telemetry-dedup-editor-style")) {
        var style = document.createElement("style");
        style.id = "telemetry-dedup-editor-style";
        style.textContent = ".dedup-form .form-row > label:first-child { width: 120px; }";
        document.head.appendChild(style);
    }

    window.TelemetryDedupEditor = {
        check: check,
        reasons: REASONS,
        bindStoreSelector: bindStoreSelector,
        msgPropertyInputs: msgPropertyInputs,
        revalidateOnChange: revalidateOnChange
    };
})();
