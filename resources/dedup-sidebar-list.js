/*
 * The dedup sidebar's list of nodes (a part of the tab, see
 * dedup-sidebar.js): every running dedup node with where it is, its store,
 * its live rates (a sparkline and the last minute's figures) and its
 * totals, sorted by label; opened, the panel of its kind
 * (dedup-sidebar-what-if.js for a sliding-window node,
 * dedup-sidebar-sensor.js for a sensor node), whose lists it fetches.
 */
(function () {
    "use strict";
    var sidebar = window.TelemetryDedupSidebar = window.TelemetryDedupSidebar || { parts: {} };

    sidebar.parts.list = function (tab) {
        var format = tab.format;
        var t = format.t;
        var thousands = format.thousands;
        var ago = format.ago;
        /** Per node id: { summary, el, expanded, busy } */
        var entries = {};
        var countLine = $('<span class="dedup-sb-count"></span>');
        var emptyNote = $('<div class="dedup-sb-empty"></div>').text(t("list.empty"));
        var nodes = $('<div class="dedup-sb-list-nodes"></div>');

        /** The panel of a node's kind. */
        function panelOf(summary) {
            return summary.type === tab.WINDOW ? tab.whatIf : tab.sensor;
        }

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
                var workspace = RED.nodes.workspace(node.z) || (RED.nodes.subflow && RED.nodes.subflow(node.z));
                flow = workspace ? (workspace.label || workspace.name || "") : "";
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
            panelOf(summary).build(body);

            var entry = { summary: summary, el: el, expanded: false, busy: false };
            head.find(".dedup-sb-toggle").on("click", function (event) {
                event.preventDefault();
                setExpanded(entry, !entry.expanded);
            });
            head.find(".dedup-sb-label").on("click", function (event) {
                event.preventDefault();
                if (RED.nodes.node(entry.summary.id)) { RED.view.reveal(entry.summary.id); }
            });
            panelOf(summary).wire(entry);
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
            el.find(".dedup-sb-spark").html(tab.chart.rates(complete, { width: 300, height: 36, stretch: true, texts: { title: t("rates.title") } }));
            el.find(".dedup-sb-peak").text(peak > 0 ? t("rates.max", { value: format.rate(peak) }) : "");
            var admitted = lastMinute(rates.admitted, rates, now);
            var suppressed = lastMinute(rates.suppressed, rates, now);
            var rejected = lastMinute(rates.rejected, rates, now);
            var figures = el.find(".dedup-sb-figures").empty()
                .attr("data-admitted", admitted).attr("data-suppressed", suppressed).attr("data-rejected", rejected);
            [["admitted", admitted], ["suppressed", suppressed], ["rejected", rejected]].forEach(function (figure) {
                $('<span class="dedup-sb-figure"></span>').addClass("dedup-sb-" + figure[0])
                    .append($('<i class="dedup-sb-key"></i>').css("background", tab.chart.seriesColours[figure[0]]))
                    .append(document.createTextNode(t("rates." + figure[0], { value: format.rate(figure[1]) })))
                    .appendTo(figures);
            });
            el.find(".dedup-sb-totals").text(t("rates.totals", {
                since: ago(summary.since, now),
                admitted: thousands(summary.totals.admitted),
                suppressed: thousands(summary.totals.suppressed),
                rejected: thousands(summary.totals.rejected)
            }));
            panelOf(summary).render(entry);
        }

        /** Every node as the runtime last told (its list, or a comms push), at the runtime's time `now`. */
        function render(summaries, now) {
            tab.serverTime = now;
            var seen = {};
            summaries.forEach(function (summary) {
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
            ordered.forEach(function (entry) { nodes.append(entry.el); });
            emptyNote.toggle(ordered.length === 0);
            countLine.text(ordered.length ? t("list.count", { count: ordered.length }) : "");
        }

        function fetchAll() {
            format.request("GET", tab.base).done(function (data) {
                if (data.maxUploadBytes > 0) { tab.maxUploadBytes = data.maxUploadBytes; }
                if (data.grid) { tab.grid = data.grid; }
                render(data.nodes, data.time);
                // Entries first drawn from a comms push that came before this answer got blank fields.
                nodes.find(".dedup-sb-seconds").filter(function () { return this.value === ""; }).val(tab.grid.seconds);
                nodes.find(".dedup-sb-metres").filter(function () { return this.value === ""; }).val(tab.grid.metres);
                nodes.find(".dedup-sb-deadbands").filter(function () { return this.value === ""; }).val(tab.grid.deadbands || "");
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
            format.request("GET", format.nodeUrl(entry)).done(function (details) {
                panelOf(entry.summary).renderLists(entry, details);
            });
        }

        /** The lists of every open node again. */
        function fetchOpenDetails() {
            Object.keys(entries).forEach(function (id) { if (entries[id].expanded) { fetchDetails(entries[id]); } });
        }

        return {
            countLine: countLine,
            emptyNote: emptyNote,
            nodes: nodes,
            render: render,
            fetchAll: fetchAll,
            fetchOpenDetails: fetchOpenDetails
        };
    };
})();
