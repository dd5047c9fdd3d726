/*
 * Editor helpers shared by the dedup nodes' edit dialogs. Served by Node-RED
 * at resources/@telemetry-dedup/node-red-dedup/dedup-editor.js and loaded by
 * each node's .html before its registerType call.
 *
 * Two kinds of validators:
 * - TelemetryDedupEditor.check.*: Node-RED 3.1+ validators, `function (value, opt)`
 *   called with the node as `this`. They return true, or the reason the value
 *   is invalid, read from the node's own message catalog under
 *   `<type>.validation.<name>` (and `<type>.label.<field>` for the field's
 *   name), which the editor shows beside the red field.
 * - positive, ttlCoversWindow, redisChosenWhenNeeded, optionalNumber: the
 *   same rules returning only true/false, for definitions written before the
 *   check.* family.
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

    function isPositive(value, whole) {
        if (isEnvReference(value)) { return true; }
        var n = numberOrNaN(value);
        return isFinite(n) && n > 0 && (!whole || Math.floor(n) === n);
    }

    /** The reasons check.* can give: each is `<type>.validation.<name>` in the catalog of a node that uses check.*. */
    var REASONS = ["positive", "wholePositive", "ttlShorterThanWindow", "redisNeeded", "redisMissing", "property"];

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
        }
    };

    /* ------------------------------------- boolean validators (kept as is) */

    /** A validator for a positive number, or a ${ENV} reference, optionally whole. */
    function positive(options) {
        var whole = options && options.whole;
        var blankAllowed = options && options.blankAllowed;
        return function (value) {
            if (blankAllowed && (value === "" || value === undefined)) { return true; }
            return isPositive(value, whole);
        };
    }

    /** The TTL must outlive the window, or a parked asset is "first" every time. */
    function ttlCoversWindow(value) {
        return isPositive(value, false) && ttlIsLongEnough(this, value);
    }

    /** A Redis store needs a dedup-redis config node. */
    function redisChosenWhenNeeded(value) {
        return redisState(this, value) === "ok";
    }

    function optionalNumber(value) {
        return value === "" || value === undefined || isEnvReference(value) || isFinite(numberOrNaN(value));
    }

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
        positive: positive,
        ttlCoversWindow: ttlCoversWindow,
        redisChosenWhenNeeded: redisChosenWhenNeeded,
        optionalNumber: optionalNumber,
        bindStoreSelector: bindStoreSelector,
        msgPropertyInputs: msgPropertyInputs,
        revalidateOnChange: revalidateOnChange
    };
})();
