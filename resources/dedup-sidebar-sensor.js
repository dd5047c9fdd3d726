/*
 * A sensor reconnect node's panel in the dedup sidebar (a part of the tab,
 * see dedup-sidebar.js): the devices that replay most, and the Remember
 * what-if: of the replays the node suppressed, the share a shorter Remember
 * (the seen-set's TTL) would have let through, which the runtime works out
 * from the time between each key's first and repeated arrival, drawn by
 * dedup-chart.js.
 */
(function () {
    "use strict";
    var sidebar = window.TelemetryDedupSidebar = window.TelemetryDedupSidebar || { parts: {} };

    sidebar.parts.sensor = function (tab) {
        var format = tab.format;
        var t = format.t;
        var thousands = format.thousands;
        var duration = format.duration;

        function build(body) {
            format.section(body, "dedup-sb-replays", t("replays.title")).append('<div class="dedup-sb-list"></div>');
            var ttl = format.section(body, "dedup-sb-ttl", t("ttl.title"), t("ttl.help"));
            $('<div class="dedup-sb-buttons"></div>').appendTo(ttl)
                .append($('<button type="button" class="red-ui-button dedup-sb-run-ttl"></button>').text(t("ttl.run")));
            $('<div class="dedup-sb-status"></div>').appendTo(ttl);
            $('<div class="dedup-sb-chart"></div>').appendTo(ttl);
            $('<div class="dedup-sb-ttl-note dedup-sb-help"></div>').appendTo(ttl);
        }

        function wire(entry) {
            entry.el.find(".dedup-sb-run-ttl").on("click", function () {
                var status = entry.el.find(".dedup-sb-status").text(t("whatIf.running")).removeClass("dedup-sb-error");
                format.request("POST", format.nodeUrl(entry, "/ttl-what-if"), {}).done(function (response) {
                    status.text("");
                    renderTtl(entry, response);
                }).fail(function (failed) {
                    entry.el.find(".dedup-sb-ttl .dedup-sb-chart").empty();
                    entry.el.find(".dedup-sb-ttl-note").text("");
                    status.text(format.errorText(failed)).addClass("dedup-sb-error");
                });
            });
        }

        /** Nothing beside the pushed rates: the panel changes only when its lists or what-if are fetched. */
        function render() {}

        function renderLists(entry, details) {
            var now = tab.serverTime || Date.now();
            format.tableOrNone(entry.el.find(".dedup-sb-replays .dedup-sb-list").empty(), [
                { label: t("replays.device"), value: function (r) { return r.device; } },
                { label: t("replays.replays"), numeric: true, value: function (r) { return thousands(r.replays); } },
                { label: t("replays.last"), value: function (r) { return format.ago(r.lastReplay, now); } }
            ], details.replays, t("replays.none"));
        }

        function renderTtl(entry, response) {
            var note = entry.el.find(".dedup-sb-ttl-note");
            var box = entry.el.find(".dedup-sb-ttl .dedup-sb-chart");
            if (response.replays === 0) {
                box.empty();
                note.text(t("ttl.none"));
                return;
            }
            box.html(tab.chart.ttl({ points: response.points, current: response.current }, {
                width: format.chartWidth(box, 340), height: 170,
                texts: {
                    title: t("ttl.chartTitle"),
                    xAxis: t("ttl.xAxis"),
                    yAxis: t("ttl.yAxis"),
                    tick: duration,
                    percent: format.axisPercent,
                    point: function (p) { return t("ttl.pointTip", { ttl: duration(p.ttlSeconds), percent: format.percent(p.fraction), count: thousands(p.letThrough) }); }
                }
            }));
            var lines = [t("ttl.measured", { count: thousands(response.replays), since: format.ago(response.stats.since, tab.serverTime || Date.now()) })];
            if (response.stats.unmeasured > 0) { lines.push(t("ttl.unmeasured", { count: thousands(response.stats.unmeasured) })); }
            note.text(lines.join(" "));
        }

        return { build: build, wire: wire, render: render, renderLists: renderLists };
    };
})();
