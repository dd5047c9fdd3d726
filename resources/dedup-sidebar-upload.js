/*
 * The what-if over an uploaded file, in the dedup sidebar (a part of the
 * tab, see dedup-sidebar.js; the what-if itself is
 * dedup-sidebar-what-if.js): once a file is chosen, which of its columns
 * hold the asset, the time, the position (and the heading, accuracy,
 * validity, satellites and HDOP when the node uses them), or in value mode
 * the reading, each preselected as the node reads its messages,
 * and the zone of times written without one. The file is read here for
 * its header only; the runtime reads the rest.
 */
(function () {
    "use strict";
    var sidebar = window.TelemetryDedupSidebar = window.TelemetryDedupSidebar || { parts: {} };

    /** The columns a file's rows are read by (the runtime's query parameters), and the node property that gives each its default. */
    function position(settings) { return settings.mode !== "value"; }
    var COLUMN_ROLES = [
        { param: "asset", property: "assetIdProperty", label: "whatIf.columns.asset" },
        { param: "time", property: "timeProperty", label: "whatIf.columns.time" },
        { param: "lat", property: "latProperty", label: "whatIf.columns.lat", when: position },
        { param: "lon", property: "lonProperty", label: "whatIf.columns.lon", when: position },
        { param: "value", property: "valueProperty", label: "whatIf.columns.value", when: function (settings) { return settings.mode === "value"; } },
        { param: "heading", property: "headingProperty", label: "whatIf.columns.heading", when: function (settings) { return position(settings) && typeof settings.minHeadingDegrees === "number"; } },
        { param: "accuracy", property: "accuracyProperty", label: "whatIf.columns.accuracy", when: function (settings) { return position(settings) && typeof settings.accuracyProperty === "string" && settings.accuracyProperty !== ""; } },
        { param: "valid", property: "validProperty", label: "whatIf.columns.valid", when: function (settings) { return position(settings) && settings.noFix === true; } },
        { param: "satellites", property: "satellitesProperty", label: "whatIf.columns.satellites", when: function (settings) { return position(settings) && typeof settings.minSatellites === "number"; } },
        { param: "hdop", property: "hdopProperty", label: "whatIf.columns.hdop", when: function (settings) { return position(settings) && typeof settings.maxHdop === "number"; } }
    ];
    /** How much of a file is read for its header: the runtime's line limit. */
    var HEADER_BYTES = 64 * 1024;

    /** A property path's last name: payload.assetId, msg.topic, payload["asset id"] give assetId, topic, asset id. */
    function lastName(path) {
        var text = String(path || "").trim();
        var quoted = /\[\s*(["'])(.*)\1\s*\]$/.exec(text);
        if (quoted) { return quoted[2]; }
        var dot = text.lastIndexOf(".");
        return dot === -1 ? text : text.slice(dot + 1);
    }

    /** The names of a file's columns: its CSV header's, or the first JSON object's keys; [] when neither can be read. */
    function columnNames(firstLine) {
        var line = firstLine.replace(/^\ufeff/, "").replace(/\r$/, "");
        if (/^\s*\{/.test(line)) {
            try {
                var row = JSON.parse(line);
                return row && typeof row === "object" && !Array.isArray(row) ? Object.keys(row) : [];
            } catch (_notJson) { return []; }
        }
        var names = [];
        var field = "";
        var quoted = false;
        for (var i = 0; i < line.length; i++) {
            var c = line[i];
            if (quoted) {
                if (c === '"' && line[i + 1] === '"') { field += '"'; i++; } else if (c === '"') { quoted = false; } else { field += c; }
            } else if (c === '"') { quoted = true; } else if (c === ",") { names.push(field.trim()); field = ""; } else { field += c; }
        }
        names.push(field.trim());
        return names.filter(function (name) { return name !== ""; });
    }

    /** The picker's choice as query parameters: a column per role (blank: recognised by name) and the zone. */
    function columnChoice(box) {
        var choice = { tz: String(box.find(".dedup-sb-zone").val() || "").trim() || "UTC" };
        box.find(".dedup-sb-column").each(function () {
            var value = $(this).val();
            if (value) { choice[$(this).attr("data-param")] = value; }
        });
        return choice;
    }

    sidebar.parts.upload = function (tab) {
        var t = tab.format.t;

        /**
         * After a file is chosen: its columns, each role's preselected as the
         * node reads it (the last name of the node's path), else left to the
         * runtime to recognise by name; the zone of times without one. The file
         * is sent, by run(choice), when Run is pressed.
         */
        function pickColumns(entry, file, run) {
            var head = file.slice(0, HEADER_BYTES);
            var read = typeof head.text === "function" ? head.text() : Promise.resolve("");
            read.then(function (text) {
                var first = String(text).split("\n").filter(function (line) { return line.trim() !== ""; })[0] || "";
                renderColumnPicker(entry, file, columnNames(first), run);
            }, function () { renderColumnPicker(entry, file, [], run); });
        }

        function renderColumnPicker(entry, file, names, run) {
            var box = entry.el.find(".dedup-sb-columns").empty().removeClass("hide");
            var node = RED.nodes.node(entry.summary.id) || {};
            var settings = entry.summary.settings || {};
            $("<h4></h4>").text(t("whatIf.columns.title", { name: file.name })).appendTo(box);
            $('<div class="dedup-sb-help"></div>').text(t("whatIf.columns.help")).appendTo(box);
            COLUMN_ROLES.forEach(function (role) {
                if (role.when && !role.when(settings)) { return; }
                var row = $('<div class="form-row"></div>').appendTo(box);
                $("<label></label>").text(t(role.label)).appendTo(row);
                var select = $("<select></select>").addClass("dedup-sb-column").attr("data-param", role.param)
                    .css({ flex: 1, minWidth: 0, margin: 0 }).appendTo(row);
                $("<option></option>").val("").text(t("whatIf.columns.automatic")).appendTo(select);
                names.forEach(function (name) { $("<option></option>").val(name).text(name).appendTo(select); });
                var wanted = lastName(nodeProperty(node, role.property)).toLowerCase();
                var match = names.filter(function (name) { return name.toLowerCase() === wanted; })[0];
                select.val(wanted !== "" && match !== undefined ? match : "");
            });
            var zone = $('<div class="form-row"></div>').appendTo(box);
            $("<label></label>").text(t("whatIf.columns.zone")).appendTo(zone);
            $('<input type="text" class="dedup-sb-zone">').val("UTC").attr("title", t("whatIf.columns.zoneHelp")).appendTo(zone);
            var buttons = $('<div class="dedup-sb-buttons"></div>').appendTo(box);
            $('<button type="button" class="red-ui-button dedup-sb-run-file"></button>').text(t("whatIf.columns.run")).appendTo(buttons)
                .on("click", function () { run(columnChoice(box)); });
            $('<button type="button" class="red-ui-button dedup-sb-cancel-file"></button>').text(t("whatIf.columns.cancel")).appendTo(buttons)
                .on("click", function () { box.addClass("hide").empty(); });
        }

        /** A node's property as it runs: its own value, else its type's default (a flow written without it runs with that). */
        function nodeProperty(node, property) {
            var value = node[property];
            if (value !== undefined && value !== null && value !== "") { return value; }
            var type = RED.nodes.getType(tab.WINDOW);
            var defaults = type && type.defaults && type.defaults[property];
            return defaults ? defaults.value : "";
        }

        return { pickColumns: pickColumns };
    };
})();
