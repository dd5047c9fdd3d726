/*
 * The dedup sidebar tab, the editor half of the dedup-sidebar plugin
 * (nodes/dedup-sidebar.html registers it; the runtime half is
 * src/dedup-sidebar.ts). Served at
 * resources/@telemetry-dedup/node-red-dedup/dedup-sidebar.js.
 *
 * It lists every running dedup node with its live rates (pushed over
 * RED.comms every two seconds), its store, and, opened, the assets or
 * devices worth a look and the what-if: the node's own decision code run
 * over its recent input or an uploaded file for a grid of Heartbeat and
 * Movement values, drawn by dedup-chart.js. Clicking a point puts it into
 * the node's edit dialog; like any edit, it takes effect on deploy.
 *
 * All text comes from the plugin's catalog
 * (nodes/locales/en-US/dedup-sidebar.json) through the plugin's `_`.
 */
(function () {
    "use strict";

    var BASE = "dedup-sidebar/nodes";
    var TOPIC = "telemetry-dedup/insight";
    var TAB = "dedup";
    var DETAILS_EVERY_MS = 5000;
    /** The runtime's limit, which it sends with the list (and enforces); until then, its default. */
    // From the runtime's node list (GET dedup-sidebar/nodes): 0 and blank until it first answers.
    var maxUploadBytes = 0;
    var grid = { seconds: "", metres: "" };
    var WINDOW = "sliding-window-dedup";

    var _ = function (key) { return key; };
    var chart;
    var content;
    var list;
    var emptyNote;
    var countLine;
    /** Per node id: { summary, el, expanded, busy } */
    var entries = {};
    var serverTime = 0;
    var detailsTimer = null;

    function t(key, substitutions) {
        return _("dedup-sidebar." + key, substitutions);
    }

    function thousands(n) {
        return Number(n).toLocaleString("en-US");
    }

    function ago(then, now) {
        var s = Math.max(0, Math.round((now - then) / 1000));
        if (s < 2) { return t("time.now"); }
        if (s < 120) { return t("time.seconds", { count: s }); }
        if (s < 7200) { return t("time.minutes", { count: Math.round(s / 60) }); }
        if (s < 172800) { return t("time.hours", { count: Math.round(s / 3600) }); }
        return t("time.days", { count: Math.round(s / 86400) });
    }

    function duration(seconds) {
        if (seconds < 120) { return t("ttl.seconds", { value: seconds }); }
        if (seconds < 7200) { return t("ttl.minutes", { value: Math.round(seconds / 6) / 10 }); }
        if (seconds < 172800) { return t("ttl.hours", { value: Math.round(seconds / 360) / 10 }); }
        return t("ttl.days", { value: Math.round(seconds / 8640) / 10 });
    }

    function percent(fraction) {
        return (Math.round(fraction * 1000) / 10) + "%";
    }

    function rate(value) {
        return value < 10 ? String(Math.round(value * 10) / 10) : thousands(Math.round(value));
    }

    /** The request's error, worded from the catalog by its code. */
    function errorText(xhr) {
        var error = xhr && xhr.responseJSON && xhr.responseJSON.error;
        if (!error) { return t("errors.request", { detail: (xhr && (xhr.status + " " + xhr.statusText)) || "" }); }
        var substitutions = $.extend({}, error);
        if (substitutions.list) { substitutions.list = t(substitutions.list === "seconds" ? "whatIf.seconds" : "whatIf.metres"); }
        var text = t("errors." + error.code, substitutions);
        return text === "dedup-sidebar.errors." + error.code ? error.message : text;
    }

    function request(method, url, body) {
        var options = { url: url, method: method, dataType: "json", cache: false };
        if (body !== undefined) {
            options.contentType = "application/json";
            options.data = JSON.stringify(body);
        }
        return $.ajax(options);
    }

    /* ------------------------------------------------------------ the list */

    function nodeLabel(summary) {
        var node = RED.nodes.node(summary.id);
        if (node && RED.utils && typeof RED.utils.getNodeLabel === "function") {
            return RED.utils.getNodeLabel(node, summary.name || summary.type);
        }
        return summary.name || summary.type;
    }

    /**
     * Where a node is: its flow's name and the start of its id, so that two
     * unnamed nodes of one type are told apart at a glance.
     */
    function whereText(summary) {
        var node = RED.nodes.node(summary.id);
        var flow = "";
        if (node && node.z) {
            var tab = RED.nodes.workspace(node.z) || (RED.nodes.subflow && RED.nodes.subflow(node.z));
            flow = tab ? (tab.label || tab.name || "") : "";
        }
        var id = "#" + String(summary.id).slice(0, 6);
        return flow ? flow + " · " + id : id;
    }

    /** A Redis store that is not connected: shown in red, with its cause. */
    function storeDown(summary) {
        var store = summary.store || {};
        return store.kind === "redis" && store.connection !== "ready";
    }

    function storeText(summary, now) {
        var store = summary.store || {};
        if (store.kind === "redis") {
            var state = t("store.state." + store.connection);
            var line = t("store.redis", { state: state === "dedup-sidebar.store.state." + store.connection ? store.connection : state });
            return store.cause ? line + " (" + store.cause + ")" : line;
        }
        var parts = [t("store.memory", { entries: thousands(store.entries || 0), max: thousands(store.maxEntries || 0), unit: t("store.unit." + summary.type) })];
        if (!store.saving) { parts.push(t("store.notSaved")); }
        else if (store.lastSave) { parts.push(t("store.saved", { ago: ago(store.lastSave, now) })); }
        else { parts.push(t("store.notSavedYet")); }
        return parts.join(" · ");
    }

    /** Per second over the last minute, the bucket still filling included. */
    function lastMinute(series, rates, now) {
        var bucketMs = rates.bucketMs;
        var filling = Math.max(0, Math.min(bucketMs, now - (rates.end - bucketMs)));
        var sum = 0;
        for (var i = Math.max(0, series.length - 6); i < series.length; i++) { sum += series[i]; }
        var span = 5 * bucketMs + filling;
        return span > 0 ? sum / (span / 1000) : 0;
    }

    function buildEntry(summary) {
        var el = $('<div class="dedup-sb-node"></div>').attr("data-node-id", summary.id);
        var head = $('<div class="dedup-sb-head"></div>').appendTo(el);
        $('<button type="button" class="red-ui-button red-ui-button-small dedup-sb-toggle"><i class="fa fa-angle-right"></i></button>')
            .attr("title", t("list.expand")).appendTo(head);
        $('<a href="#" class="dedup-sb-label"></a>').attr("title", t("list.reveal")).appendTo(head);
        $('<span class="dedup-sb-type"></span>').appendTo(head);
        $('<div class="dedup-sb-where"></div>').appendTo(el);
        $('<div class="dedup-sb-store"></div>').appendTo(el);
        var rates = $('<div class="dedup-sb-rates"></div>').appendTo(el);
        $('<div class="dedup-sb-peak"></div>').appendTo(rates);
        $('<div class="dedup-sb-spark"></div>').attr("title", t("rates.title")).appendTo(rates);
        $('<div class="dedup-sb-figures"></div>').attr("title", t("rates.legendHelp")).appendTo(rates);
        $('<div class="dedup-sb-totals"></div>').appendTo(rates);
        var body = $('<div class="dedup-sb-body hide"></div>').appendTo(el);
        if (summary.type === WINDOW) { buildWindowBody(body); } else { buildSensorBody(body); }

        var entry = { summary: summary, el: el, expanded: false, busy: false };
        head.find(".dedup-sb-toggle").on("click", function (event) {
            event.preventDefault();
            setExpanded(entry, !entry.expanded);
        });
        head.find(".dedup-sb-label").on("click", function (event) {
            event.preventDefault();
            if (RED.nodes.node(entry.summary.id)) { RED.view.reveal(entry.summary.id); }
        });
        if (summary.type === WINDOW) { wireWindowBody(entry); } else { wireSensorBody(entry); }
        return entry;
    }

    function renderEntry(entry, now) {
        var summary = entry.summary;
        var el = entry.el;
        var inEditor = !!RED.nodes.node(summary.id);
        el.find(".dedup-sb-label").text(nodeLabel(summary)).toggleClass("dedup-sb-missing", !inEditor)
            .attr("title", inEditor ? t("list.reveal") : t("list.notInEditor"));
        el.find(".dedup-sb-type").text(t("type." + summary.type));
        el.find(".dedup-sb-where").text(whereText(summary)).attr("title", summary.id);
        el.find(".dedup-sb-store").text(storeText(summary, now)).toggleClass("dedup-sb-store-down", storeDown(summary));
        var rates = summary.rates;
        var complete = {
            bucketMs: rates.bucketMs,
            admitted: rates.admitted.slice(0, -1),
            suppressed: rates.suppressed.slice(0, -1),
            rejected: rates.rejected.slice(0, -1)
        };
        var peak = 0;
        ["admitted", "suppressed", "rejected"].forEach(function (name) {
            complete[name].forEach(function (c) { peak = Math.max(peak, c * 1000 / rates.bucketMs); });
        });
        el.find(".dedup-sb-spark").html(chart.rates(complete, { width: 300, height: 36, stretch: true, texts: { title: t("rates.title") } }));
        el.find(".dedup-sb-peak").text(peak > 0 ? t("rates.max", { value: rate(peak) }) : "");
        var admitted = lastMinute(rates.admitted, rates, now);
        var suppressed = lastMinute(rates.suppressed, rates, now);
        var rejected = lastMinute(rates.rejected, rates, now);
        var figures = el.find(".dedup-sb-figures").empty()
            .attr("data-admitted", admitted).attr("data-suppressed", suppressed).attr("data-rejected", rejected);
        [["admitted", admitted], ["suppressed", suppressed], ["rejected", rejected]].forEach(function (figure) {
            $('<span class="dedup-sb-figure"></span>').addClass("dedup-sb-" + figure[0])
                .append($('<i class="dedup-sb-key"></i>').css("background", chart.seriesColours[figure[0]]))
                .append(document.createTextNode(t("rates." + figure[0], { value: rate(figure[1]) })))
                .appendTo(figures);
        });
        el.find(".dedup-sb-totals").text(t("rates.totals", {
            since: ago(summary.since, now),
            admitted: thousands(summary.totals.admitted),
            suppressed: thousands(summary.totals.suppressed),
            rejected: thousands(summary.totals.rejected)
        }));
        if (summary.type === WINDOW) { renderSampleNote(entry); }
    }

    function render(nodes, now) {
        serverTime = now;
        var seen = {};
        nodes.forEach(function (summary) {
            seen[summary.id] = true;
            var entry = entries[summary.id];
            if (entry && entry.summary.type !== summary.type) {
                entry.el.remove();
                entry = null;
            }
            if (!entry) {
                entry = buildEntry(summary);
                entries[summary.id] = entry;
            }
            entry.summary = summary;
            renderEntry(entry, now);
        });
        Object.keys(entries).forEach(function (id) {
            if (!seen[id]) {
                entries[id].el.remove();
                delete entries[id];
            }
        });
        var ordered = Object.keys(entries).map(function (id) { return entries[id]; })
            .sort(function (a, b) { return nodeLabel(a.summary).localeCompare(nodeLabel(b.summary)) || a.summary.id.localeCompare(b.summary.id); });
        ordered.forEach(function (entry) { list.append(entry.el); });
        emptyNote.toggle(ordered.length === 0);
        countLine.text(ordered.length ? t("list.count", { count: ordered.length }) : "");
    }

    function fetchAll() {
        request("GET", BASE).done(function (data) {
            if (data.maxUploadBytes > 0) { maxUploadBytes = data.maxUploadBytes; }
            if (data.grid) { grid = data.grid; }
            render(data.nodes, data.time);
            // Entries first drawn from a comms push that came before this answer got blank fields.
            list.find(".dedup-sb-seconds").filter(function () { return this.value === ""; }).val(grid.seconds);
            list.find(".dedup-sb-metres").filter(function () { return this.value === ""; }).val(grid.metres);
        });
    }

    function setExpanded(entry, expanded) {
        entry.expanded = expanded;
        entry.el.toggleClass("dedup-sb-expanded", expanded);
        entry.el.find(".dedup-sb-toggle i").toggleClass("fa-angle-right", !expanded).toggleClass("fa-angle-down", expanded);
        entry.el.find(".dedup-sb-body").toggleClass("hide", !expanded);
        if (expanded) { fetchDetails(entry); }
    }

    function fetchDetails(entry) {
        request("GET", BASE + "/" + encodeURIComponent(entry.summary.id)).done(function (details) {
            if (entry.summary.type === WINDOW) { renderWindowLists(entry, details); } else { renderSensorLists(entry, details); }
        });
    }

    function table(columns, rows) {
        var tableEl = $('<table class="dedup-sb-table"></table>');
        var head = $("<tr></tr>").appendTo($("<thead></thead>").appendTo(tableEl));
        columns.forEach(function (c) { $("<th></th>").text(c.label).toggleClass("dedup-sb-num", !!c.numeric).appendTo(head); });
        var bodyEl = $("<tbody></tbody>").appendTo(tableEl);
        rows.forEach(function (row) {
            var tr = $("<tr></tr>").appendTo(bodyEl);
            columns.forEach(function (c) { $("<td></td>").text(c.value(row)).toggleClass("dedup-sb-num", !!c.numeric).appendTo(tr); });
        });
        return tableEl;
    }

    function section(body, className, title, help) {
        var el = $('<div class="dedup-sb-section"></div>').addClass(className).appendTo(body);
        $("<h4></h4>").text(title).appendTo(el);
        if (help) { $('<div class="dedup-sb-help"></div>').text(help).appendTo(el); }
        return el;
    }

    /* ---------------------------------------------------- sliding window */

    function buildWindowBody(body) {
        section(body, "dedup-sb-stuck", t("stuck.title"), t("stuck.help")).append('<div class="dedup-sb-list"></div>');
        section(body, "dedup-sb-silent", t("silent.title")).append('<div class="dedup-sb-list"></div>');
        var whatIf = section(body, "dedup-sb-whatif", t("whatIf.title"), t("whatIf.help"));
        var seconds = $('<div class="form-row"></div>').appendTo(whatIf);
        $("<label></label>").text(t("whatIf.seconds")).appendTo(seconds);
        $('<input type="text" class="dedup-sb-seconds">').val(grid.seconds).appendTo(seconds);
        var metres = $('<div class="form-row"></div>').appendTo(whatIf);
        $("<label></label>").text(t("whatIf.metres")).appendTo(metres);
        $('<input type="text" class="dedup-sb-metres">').val(grid.metres).appendTo(metres);
        var buttons = $('<div class="dedup-sb-buttons"></div>').appendTo(whatIf);
        $('<button type="button" class="red-ui-button dedup-sb-run-sample"></button>').text(t("whatIf.runSample")).appendTo(buttons);
        $('<button type="button" class="red-ui-button dedup-sb-upload"></button>')
            .text(t("whatIf.upload")).appendTo(buttons);
        $('<input type="file" class="dedup-sb-file hide" accept=".csv,.jsonl,.ndjson,.json,.txt,text/csv">').appendTo(buttons);
        $('<div class="dedup-sb-columns hide"></div>').appendTo(whatIf);
        $('<div class="dedup-sb-sample-note dedup-sb-help"></div>').appendTo(whatIf);
        $('<div class="dedup-sb-status"></div>').appendTo(whatIf);
        $('<div class="dedup-sb-source"></div>').appendTo(whatIf);
        $('<div class="dedup-sb-chart"></div>').appendTo(whatIf);
        $('<div class="dedup-sb-pick dedup-sb-help hide"></div>').text(t("whatIf.pick")).appendTo(whatIf);
        $('<div class="dedup-sb-bad"></div>').appendTo(whatIf);
        var jitter = $('<div class="dedup-sb-jitter hide"></div>').appendTo(whatIf);
        $("<h4></h4>").text(t("jitter.title")).appendTo(jitter);
        $('<div class="dedup-sb-jitter-chart"></div>').appendTo(jitter);
        $('<div class="dedup-sb-jitter-summary"></div>').appendTo(jitter);
        var suggestion = $('<div class="dedup-sb-suggestion"></div>').appendTo(jitter);
        $('<span class="dedup-sb-suggested"></span>').appendTo(suggestion);
        $('<button type="button" class="red-ui-button red-ui-button-small dedup-sb-use-suggested"></button>').appendTo(suggestion);
    }

    function wireWindowBody(entry) {
        var el = entry.el;
        el.find(".dedup-sb-run-sample").on("click", function () {
            runWhatIf(entry, request("POST", BASE + "/" + encodeURIComponent(entry.summary.id) + "/what-if", lists(entry)));
        });
        el.find(".dedup-sb-upload").on("click", function () { el.find(".dedup-sb-file").val("").trigger("click"); })
            .on("mouseenter focus", function () { $(this).attr("title", t("whatIf.uploadHelp", { limit: Math.round(maxUploadBytes / 1024 / 1024) })); });
        el.find(".dedup-sb-file").on("change", function () {
            var file = this.files && this.files[0];
            if (file) { pickColumns(entry, file); }
        });
        el.find(".dedup-sb-chart").on("click keydown", ".dedup-chart-point", function (event) {
            if (event.type === "keydown" && event.key !== "Enter" && event.key !== " ") { return; }
            event.preventDefault();
            var seconds = Number(this.getAttribute("data-seconds"));
            var metres = Number(this.getAttribute("data-metres"));
            el.find(".dedup-chart-point").removeClass("dedup-chart-chosen");
            $(this).addClass("dedup-chart-chosen");
            applyPoint(entry.summary.id, seconds, metres);
        });
        el.find(".dedup-sb-use-suggested").on("click", function () {
            var suggested = Number($(this).attr("data-metres"));
            applyPoint(entry.summary.id, entry.summary.settings.minSeconds, suggested);
        });
    }

    function lists(entry) {
        return { seconds: entry.el.find(".dedup-sb-seconds").val(), metres: entry.el.find(".dedup-sb-metres").val() };
    }

    function renderSampleNote(entry) {
        var sample = entry.summary.sample;
        var note = entry.el.find(".dedup-sb-sample-note");
        if (!sample || sample.capacity === 0) {
            note.text(t("whatIf.sampleOff"));
            entry.el.find(".dedup-sb-run-sample").prop("disabled", true);
        } else {
            note.text(t("whatIf.sampleSize", { size: thousands(sample.size), capacity: thousands(sample.capacity) }));
            entry.el.find(".dedup-sb-run-sample").prop("disabled", sample.size === 0 || entry.busy);
        }
    }

    function renderWindowLists(entry, details) {
        var now = serverTime || Date.now();
        var stuck = entry.el.find(".dedup-sb-stuck .dedup-sb-list").empty();
        if (!details.stuck || details.stuck.length === 0) {
            stuck.append($('<div class="dedup-sb-none"></div>').text(t("stuck.none")));
        } else {
            stuck.append(table([
                { label: t("stuck.asset"), value: function (r) { return r.assetId; } },
                { label: t("stuck.suppressed"), numeric: true, value: function (r) { return thousands(r.suppressed); } },
                { label: t("stuck.accepted"), numeric: true, value: function (r) { return thousands(r.accepted); } },
                { label: t("stuck.ratio"), numeric: true, value: function (r) { return String(Math.round(r.ratio * 10) / 10); } }
            ], details.stuck));
        }
        var silent = entry.el.find(".dedup-sb-silent .dedup-sb-list").empty();
        if (!details.silent || details.silent.length === 0) {
            silent.append($('<div class="dedup-sb-none"></div>').text(t("silent.none")));
        } else {
            silent.append(table([
                { label: t("silent.asset"), value: function (r) { return r.assetId; } },
                { label: t("silent.lastSeen"), value: function (r) { return ago(r.lastSeen, now); } },
                { label: t("silent.accepted"), numeric: true, value: function (r) { return thousands(r.accepted); } },
                { label: t("silent.suppressed"), numeric: true, value: function (r) { return thousands(r.suppressed); } }
            ], details.silent));
            silent.append($('<div class="dedup-sb-help"></div>').text(t("silent.followed", { count: thousands(details.assets) })));
        }
    }

    function setBusy(entry, busy, status) {
        entry.busy = busy;
        entry.el.find(".dedup-sb-run-sample, .dedup-sb-upload").prop("disabled", busy);
        entry.el.find(".dedup-sb-status").text(status || "").toggleClass("dedup-sb-error", false);
        if (!busy) { renderSampleNote(entry); }
    }

    /** An error: said, and the last result cleared so that it is not read as this request's. */
    function showError(entry, text) {
        clearWhatIf(entry);
        entry.el.find(".dedup-sb-status").text(text).addClass("dedup-sb-error");
    }

    function clearWhatIf(entry) {
        var el = entry.el;
        el.find(".dedup-sb-source").text("");
        el.find(".dedup-sb-whatif .dedup-sb-chart").empty();
        el.find(".dedup-sb-pick").addClass("hide");
        el.find(".dedup-sb-bad").empty();
        el.find(".dedup-sb-jitter").addClass("hide").find(".dedup-sb-jitter-chart").empty();
    }

    /** The width a chart is drawn at: its box's, so that its text shows at its own size (11 px), not scaled down. */
    function chartWidth(box, fallback) {
        var width = Math.round(box.width() || 0);
        return width >= 200 ? Math.min(width, 720) : fallback;
    }

    function runWhatIf(entry, xhr) {
        setBusy(entry, true, t("whatIf.running"));
        xhr.done(function (response) {
            setBusy(entry, false);
            renderWhatIf(entry, response);
            // The list too, so that the sample's size beside the button is the one just used.
            fetchAll();
        }).fail(function (failed) {
            setBusy(entry, false);
            showError(entry, errorText(failed));
        });
    }

    /* ------------------------------------------- an upload's columns */

    /** The columns a file's rows are read by (the runtime's query parameters), and the node property that gives each its default. */
    var COLUMN_ROLES = [
        { param: "asset", property: "assetIdProperty", label: "whatIf.columns.asset" },
        { param: "time", property: "timeProperty", label: "whatIf.columns.time" },
        { param: "lat", property: "latProperty", label: "whatIf.columns.lat" },
        { param: "lon", property: "lonProperty", label: "whatIf.columns.lon" },
        { param: "heading", property: "headingProperty", label: "whatIf.columns.heading", when: function (settings) { return typeof settings.minHeadingDegrees === "number"; } },
        { param: "accuracy", property: "accuracyProperty", label: "whatIf.columns.accuracy", when: function (settings) { return typeof settings.accuracyProperty === "string" && settings.accuracyProperty !== ""; } }
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

    /**
     * After a file is chosen: its columns, each role's preselected as the
     * node reads it (the last name of the node's path), else left to the
     * runtime to recognise by name; the zone of times without one. The file
     * is sent when Run is pressed.
     */
    function pickColumns(entry, file) {
        if (maxUploadBytes > 0 && file.size > maxUploadBytes) {
            entry.el.find(".dedup-sb-columns").addClass("hide").empty();
            showError(entry, t("errors.tooLarge", { size: (file.size / 1024 / 1024).toFixed(1), limit: Math.round(maxUploadBytes / 1024 / 1024) }));
            return;
        }
        var head = file.slice(0, HEADER_BYTES);
        var read = typeof head.text === "function" ? head.text() : Promise.resolve("");
        read.then(function (text) {
            var first = String(text).split("\n").filter(function (line) { return line.trim() !== ""; })[0] || "";
            renderColumnPicker(entry, file, columnNames(first));
        }, function () { renderColumnPicker(entry, file, []); });
    }

    function renderColumnPicker(entry, file, names) {
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
            .on("click", function () { uploadWhatIf(entry, file, columnChoice(box)); });
        $('<button type="button" class="red-ui-button dedup-sb-cancel-file"></button>').text(t("whatIf.columns.cancel")).appendTo(buttons)
            .on("click", function () { box.addClass("hide").empty(); });
    }

    /** A node's property as it runs: its own value, else its type's default (a flow written without it runs with that). */
    function nodeProperty(node, property) {
        var value = node[property];
        if (value !== undefined && value !== null && value !== "") { return value; }
        var type = RED.nodes.getType(WINDOW);
        var defaults = type && type.defaults && type.defaults[property];
        return defaults ? defaults.value : "";
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

    function uploadWhatIf(entry, file, choice) {
        if (maxUploadBytes > 0 && file.size > maxUploadBytes) {
            showError(entry, t("errors.tooLarge", { size: (file.size / 1024 / 1024).toFixed(1), limit: Math.round(maxUploadBytes / 1024 / 1024) }));
            return;
        }
        var query = $.param($.extend({ name: file.name }, lists(entry), choice));
        runWhatIf(entry, $.ajax({
            url: BASE + "/" + encodeURIComponent(entry.summary.id) + "/what-if/file?" + query,
            method: "POST",
            data: file,
            processData: false,
            contentType: "application/octet-stream",
            dataType: "json"
        }));
    }

    function renderWhatIf(entry, response) {
        var result = response.result;
        var el = entry.el;
        var source = response.source === "file"
            ? t("whatIf.fromFile", { name: response.name, received: thousands(result.received), assets: thousands(result.assets) })
            : t("whatIf.fromSample", { received: thousands(result.received), assets: thousands(result.assets) });
        el.find(".dedup-sb-source").text(source);
        if (response.source === "file" && response.read && response.read.mapping) {
            var read = response.read;
            var columns = t("whatIf.readAs", {
                asset: read.mapping.assetId, time: read.mapping.time, lat: read.mapping.lat, lon: read.mapping.lon,
                count: thousands(read.zonelessTimes), zone: read.timeZone
            });
            el.find(".dedup-sb-source").append($('<div class="dedup-sb-help dedup-sb-read-as"></div>').text(columns + (read.reordered ? " " + t("whatIf.reordered") : "")));
        }
        var current = response.current && { minSeconds: Number(response.current.minSeconds), minMetres: Number(response.current.minMetres) };
        var chartBox = el.find(".dedup-sb-whatif .dedup-sb-chart");
        chartBox.html(chart.whatIf({
            seconds: result.spec.seconds,
            metres: result.spec.metres,
            cells: result.cells,
            current: current,
            suggestedMetres: result.jitter.suggestedMetres
        }, {
            width: chartWidth(chartBox, 340), height: 230,
            texts: {
                title: t("whatIf.chartTitle"),
                legend: t("whatIf.legend"),
                xAxis: t("whatIf.xAxis"),
                yAxis: t("whatIf.yAxis"),
                heartbeat: function (s) { return t("whatIf.heartbeat", { seconds: s }); },
                current: t("whatIf.current"),
                suggested: function (m) { return t("whatIf.suggestedMark", { metres: m }); },
                percent: function (f) { return Math.round(f * 100) + "%"; },
                point: function (c) {
                    return t("whatIf.pointTip", { seconds: c.minSeconds, metres: c.minMetres, percent: percent(c.admittedFraction), admitted: thousands(c.admitted), received: thousands(c.received) });
                }
            }
        }));
        el.find(".dedup-sb-pick").removeClass("hide");
        var bad = el.find(".dedup-sb-bad").empty();
        if (response.read && response.read.badRows > 0) {
            bad.append($("<div></div>").text(t("whatIf.badRows", { count: thousands(response.read.badRows), max: 10 })));
            var ul = $("<ul></ul>").appendTo(bad);
            response.read.firstBad.forEach(function (row) { $("<li></li>").text(t("whatIf.badRow", row)).appendTo(ul); });
        }
        renderJitter(entry, result.jitter);
    }

    function renderJitter(entry, jitter) {
        var box = entry.el.find(".dedup-sb-jitter").removeClass("hide");
        if (jitter.p95Metres === null) {
            box.find(".dedup-sb-jitter-chart").empty();
            box.find(".dedup-sb-jitter-summary").text(t("jitter.none", { heartbeat: jitter.heartbeatSeconds }));
            box.find(".dedup-sb-suggestion").addClass("hide");
            return;
        }
        var jitterBox = box.find(".dedup-sb-jitter-chart");
        jitterBox.html(chart.histogram(jitter, {
            width: chartWidth(jitterBox, 340), height: 150,
            texts: {
                xAxis: t("jitter.xAxis"),
                yAxis: t("jitter.yAxis"),
                p95: function (m) { return t("jitter.p95Mark", { metres: m }); },
                suggested: function (m) { return t("jitter.suggestedMark", { metres: m }); },
                bar: function (from, to, count) { return t("jitter.barTip", { from: from, to: to, count: thousands(count) }); },
                beyond: function (count) { return t("jitter.beyondTip", { count: thousands(count) }); }
            }
        }));
        box.find(".dedup-sb-jitter-summary").text(t("jitter.summary", {
            pairs: thousands(jitter.parkedPairs), heartbeat: jitter.heartbeatSeconds, p95: Math.round(jitter.p95Metres * 10) / 10
        }));
        box.find(".dedup-sb-suggestion").removeClass("hide");
        box.find(".dedup-sb-suggested").text(t("jitter.suggested", { metres: jitter.suggestedMetres }));
        box.find(".dedup-sb-use-suggested").text(t("jitter.use", { metres: jitter.suggestedMetres })).attr("data-metres", jitter.suggestedMetres);
    }

    /**
     * Puts a Heartbeat and Movement into the node's edit dialog: the open one
     * when it is this node's, else a new one. Nothing changes in the runtime
     * until the user presses Done and deploys.
     */
    function applyPoint(id, seconds, metres) {
        var node = RED.nodes.node(id);
        if (!node) {
            RED.notify(t("apply.notInWorkspace"), "warning");
            return;
        }
        var stack = typeof RED.editor.getEditStack === "function" ? RED.editor.getEditStack() : [];
        var top = stack.length ? stack[stack.length - 1] : null;
        if (top && top.id === id) {
            setDialogFields(seconds, metres);
            return;
        }
        if (stack.length > 0) {
            RED.notify(t("apply.otherDialog"), "warning");
            return;
        }
        if (node.z && RED.workspaces.active() !== node.z) { RED.workspaces.show(node.z); }
        RED.editor.edit(node);
        var tries = 0;
        (function waitForDialog() {
            var open = typeof RED.editor.getEditStack === "function" ? RED.editor.getEditStack() : [];
            var editing = open.length && open[open.length - 1].id === id;
            if (editing && $("#node-input-minSeconds").length && $("#node-input-minMetres").length) {
                setDialogFields(seconds, metres);
            } else if (++tries < 100) {
                setTimeout(waitForDialog, 50);
            } else {
                RED.notify(t("apply.failed"), "error");
            }
        })();
    }

    function setDialogFields(seconds, metres) {
        $("#node-input-minSeconds").val(String(seconds)).trigger("change");
        $("#node-input-minMetres").val(String(metres)).trigger("change");
        RED.notify(t("apply.done", { seconds: seconds, metres: metres }), { type: "success", timeout: 4000 });
    }

    /* ------------------------------------------------------------- sensor */

    function buildSensorBody(body) {
        section(body, "dedup-sb-replays", t("replays.title")).append('<div class="dedup-sb-list"></div>');
        var ttl = section(body, "dedup-sb-ttl", t("ttl.title"), t("ttl.help"));
        $('<div class="dedup-sb-buttons"></div>').appendTo(ttl)
            .append($('<button type="button" class="red-ui-button dedup-sb-run-ttl"></button>').text(t("ttl.run")));
        $('<div class="dedup-sb-status"></div>').appendTo(ttl);
        $('<div class="dedup-sb-chart"></div>').appendTo(ttl);
        $('<div class="dedup-sb-ttl-note dedup-sb-help"></div>').appendTo(ttl);
    }

    function wireSensorBody(entry) {
        entry.el.find(".dedup-sb-run-ttl").on("click", function () {
            var status = entry.el.find(".dedup-sb-status").text(t("whatIf.running")).removeClass("dedup-sb-error");
            request("POST", BASE + "/" + encodeURIComponent(entry.summary.id) + "/ttl-what-if", {}).done(function (response) {
                status.text("");
                renderTtl(entry, response);
            }).fail(function (failed) {
                entry.el.find(".dedup-sb-ttl .dedup-sb-chart").empty();
                entry.el.find(".dedup-sb-ttl-note").text("");
                status.text(errorText(failed)).addClass("dedup-sb-error");
            });
        });
    }

    function renderSensorLists(entry, details) {
        var now = serverTime || Date.now();
        var box = entry.el.find(".dedup-sb-replays .dedup-sb-list").empty();
        if (!details.replays || details.replays.length === 0) {
            box.append($('<div class="dedup-sb-none"></div>').text(t("replays.none")));
            return;
        }
        box.append(table([
            { label: t("replays.device"), value: function (r) { return r.device; } },
            { label: t("replays.replays"), numeric: true, value: function (r) { return thousands(r.replays); } },
            { label: t("replays.last"), value: function (r) { return ago(r.lastReplay, now); } }
        ], details.replays));
    }

    function renderTtl(entry, response) {
        var note = entry.el.find(".dedup-sb-ttl-note");
        var box = entry.el.find(".dedup-sb-ttl .dedup-sb-chart");
        if (response.replays === 0) {
            box.empty();
            note.text(t("ttl.none"));
            return;
        }
        box.html(chart.ttl({ points: response.points, current: response.current }, {
            width: chartWidth(box, 340), height: 170,
            texts: {
                title: t("ttl.chartTitle"),
                xAxis: t("ttl.xAxis"),
                yAxis: t("ttl.yAxis"),
                tick: duration,
                percent: function (f) { return Math.round(f * 100) + "%"; },
                point: function (p) { return t("ttl.pointTip", { ttl: duration(p.ttlSeconds), percent: percent(p.fraction), count: thousands(p.letThrough) }); }
            }
        }));
        var lines = [t("ttl.measured", { count: thousands(response.replays), since: ago(response.stats.since, serverTime || Date.now()) })];
        if (response.stats.unmeasured > 0) { lines.push(t("ttl.unmeasured", { count: thousands(response.stats.unmeasured) })); }
        note.text(lines.join(" "));
    }

    /* ------------------------------------------------------------ install */

    /**
     * The editor of 3.1 to 4.1 puts a plugin's tab button after its own five
     * (info, help, debug, config, context), `pinned` or not: it sorts the
     * buttons by the saved editor.sidebar.order and then by when they came.
     * At the default sidebar width (315 px) only four buttons fit and the
     * last ones go into the ▾ menu: ours first. So, unless the user placed
     * the tab themselves (their order names it), its button goes after the
     * debug tab's; the buttons that then no longer fit are the editor's
     * config and context, still in the ▾ menu.
     */
    function keepInTabBar(tries) {
        // Node-RED 5 rebuilt the sidebar: every tab's button sits in one bar
        // under the workspace, grouped by the section it shows in, none moved
        // into a menu. There is nothing to move.
        if ($('.red-ui-sidebar-tab-bar button[data-tab-id="' + TAB + '"]').length) { return; }
        if (RED.settings.get("editor.sidebar.order", []).indexOf(TAB) !== -1) { return; }
        var li = $("#red-ui-tab-" + TAB);
        var button = $("#red-ui-tab-" + TAB + "-link-button");
        var debugLi = $("#red-ui-tab-debug");
        var debugButton = $("#red-ui-tab-debug-link-button");
        if (!li.length || !button.length || !debugLi.length || !debugButton.length) {
            // The editor may add its own tabs after the plugins': wait for the debug tab a little.
            if ((tries || 0) < 50) { setTimeout(function () { keepInTabBar((tries || 0) + 1); }, 200); }
            return;
        }
        li.insertAfter(debugLi);
        button.insertAfter(debugButton).show();
        // The editor fits the buttons to the width again on a resize (it hides the last ones that do not fit).
        $(window).trigger("resize");
    }

    function install(plugin) {
        _ = plugin._;
        chart = window.TelemetryDedupChart;
        content = $('<div class="dedup-sb"></div>');
        var toolbar = $('<div class="red-ui-sidebar-header dedup-sb-header"></div>').appendTo(content);
        countLine = $('<span class="dedup-sb-count"></span>').appendTo(toolbar);
        $('<button type="button" class="red-ui-sidebar-header-button dedup-sb-refresh"><i class="fa fa-refresh"></i></button>')
            .attr("title", t("list.refresh")).appendTo(toolbar)
            .on("click", function (event) {
                event.preventDefault();
                fetchAll();
                Object.keys(entries).forEach(function (id) { if (entries[id].expanded) { fetchDetails(entries[id]); } });
            });
        var scroll = $('<div class="dedup-sb-scroll"></div>').appendTo(content);
        emptyNote = $('<div class="dedup-sb-empty"></div>').text(t("list.empty")).appendTo(scroll);
        list = $('<div class="dedup-sb-list-nodes"></div>').appendTo(scroll);

        RED.actions.add("telemetry-dedup:show-dedup-tab", function () { RED.sidebar.show(TAB); });
        RED.sidebar.addTab({
            id: TAB,
            label: t("tab.label"),
            name: t("tab.name"),
            iconClass: "fa fa-filter",
            content: content,
            enableOnEdit: true,
            pinned: true,
            action: "telemetry-dedup:show-dedup-tab",
            onchange: function () { fetchAll(); }
        });
        keepInTabBar();
        RED.comms.subscribe(TOPIC, function (topic, data) {
            if (data && Array.isArray(data.nodes)) { render(data.nodes, data.time); }
        });
        if (detailsTimer === null) {
            detailsTimer = setInterval(function () {
                if (!content.is(":visible")) { return; }
                Object.keys(entries).forEach(function (id) { if (entries[id].expanded) { fetchDetails(entries[id]); } });
            }, DETAILS_EVERY_MS);
        }
        fetchAll();
    }

    window.TelemetryDedupSidebar = { install: install };
})();
