/*
 * A sliding-window node's asset lists in the dedup sidebar (a part of the
 * tab, see dedup-sidebar.js; its panel is dedup-sidebar-what-if.js): the
 * assets that look stuck (mostly suppressed), those whose pings have had no
 * fix for at least the node's Heartbeat (position mode only: a reading has
 * no fix), and those silent longest, as the runtime's node details give
 * them (src/insight/sidebar-view.ts).
 */
(function () {
    "use strict";
    var sidebar = window.TelemetryDedupSidebar = window.TelemetryDedupSidebar || { parts: {} };

    sidebar.parts.assets = function (tab) {
        var format = tab.format;
        var t = format.t;
        var thousands = format.thousands;
        var section = format.section;

        function build(body) {
            section(body, "dedup-sb-stuck", t("stuck.title"), t("stuck.help")).append('<div class="dedup-sb-list"></div>');
            section(body, "dedup-sb-nofix", t("noFix.title"), t("noFix.help")).append('<div class="dedup-sb-list"></div>');
            section(body, "dedup-sb-silent", t("silent.title")).append('<div class="dedup-sb-list"></div>');
        }

        function render(entry, details) {
            var now = tab.serverTime || Date.now();
            var ago = format.ago;
            format.tableOrNone(entry.el.find(".dedup-sb-stuck .dedup-sb-list").empty(), [
                { label: t("stuck.asset"), value: function (r) { return r.assetId; } },
                { label: t("stuck.suppressed"), numeric: true, value: function (r) { return thousands(r.suppressed); } },
                { label: t("stuck.accepted"), numeric: true, value: function (r) { return thousands(r.accepted); } },
                { label: t("stuck.ratio"), numeric: true, value: function (r) { return String(Math.round(r.ratio * 10) / 10); } }
            ], details.stuck, t("stuck.none"));
            // The runtime gives no such list in value mode.
            var noFix = entry.el.find(".dedup-sb-nofix").toggle(Array.isArray(details.noFix));
            if (Array.isArray(details.noFix)) {
                format.tableOrNone(noFix.find(".dedup-sb-list").empty(), [
                    { label: t("noFix.asset"), value: function (r) { return r.assetId; } },
                    { label: t("noFix.since"), value: function (r) { return ago(r.noFixSince, now); } },
                    { label: t("noFix.lastSeen"), value: function (r) { return ago(r.lastSeen, now); } },
                    { label: t("noFix.suppressed"), numeric: true, value: function (r) { return thousands(r.suppressed); } }
                ], details.noFix, t("noFix.none", { heartbeat: entry.summary.settings.minSeconds }));
            }
            var silent = entry.el.find(".dedup-sb-silent .dedup-sb-list").empty();
            var listed = format.tableOrNone(silent, [
                { label: t("silent.asset"), value: function (r) { return r.assetId; } },
                { label: t("silent.lastSeen"), value: function (r) { return ago(r.lastSeen, now); } },
                { label: t("silent.accepted"), numeric: true, value: function (r) { return thousands(r.accepted); } },
                { label: t("silent.suppressed"), numeric: true, value: function (r) { return thousands(r.suppressed); } }
            ], details.silent, t("silent.none"));
            if (listed) { silent.append($('<div class="dedup-sb-help"></div>').text(t("silent.followed", { count: thousands(details.assets) }))); }
        }

        return { build: build, render: render };
    };
})();
