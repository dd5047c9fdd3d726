/*
 * Editor helpers shared by the dedup nodes' edit dialogs. Served by Node-RED
 * at resources/@telemetry-dedup/node-red-dedup/dedup-editor.js and loaded by
 * each node's .html before its registerType call.
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

    /** A validator for a positive number, or a ${ENV} reference, optionally whole. */
    function positive(options) {
        var whole = options && options.whole;
        var blankAllowed = options && options.blankAllowed;
        return function (value) {
            if (blankAllowed && (value === "" || value === undefined)) { return true; }
            if (isEnvReference(value)) { return true; }
            var n = numberOrNaN(value);
            return isFinite(n) && n > 0 && (!whole || Math.floor(n) === n);
        };
    }

    /** The TTL must outlive the window, or a parked asset is "first" every time. */
    function ttlCoversWindow(value) {
        if (!positive()(value)) { return false; }
        var ttl = numberOrNaN(value);
        var windowField = $("#node-input-minSeconds");
        var minSeconds = numberOrNaN(windowField.length ? windowField.val() : this.minSeconds);
        if (isEnvReference(value) || !isFinite(minSeconds)) { return true; }
        return ttl >= minSeconds;
    }

    /** A Redis store needs a dedup-redis config node. */
    function redisChosenWhenNeeded(value) {
        var storeField = $("#node-input-store");
        var store = storeField.length ? storeField.val() : this.store;
        return store !== "redis" || (typeof value === "string" && value !== "" && value !== "_ADD_");
    }

    function optionalNumber(value) {
        return value === "" || value === undefined || isEnvReference(value) || isFinite(numberOrNaN(value));
    }

    /** Shows the Redis row only for the Redis store, and the note for memory. */
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

    window.TelemetryDedupEditor = {
        positive: positive,
        ttlCoversWindow: ttlCoversWindow,
        redisChosenWhenNeeded: redisChosenWhenNeeded,
        optionalNumber: optionalNumber,
        bindStoreSelector: bindStoreSelector,
        msgPropertyInputs: msgPropertyInputs
    };
})();
