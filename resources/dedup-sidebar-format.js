/*
 * The dedup sidebar's words and numbers (a part of the tab, see
 * dedup-sidebar.js): text from the plugin's catalog
 * (nodes/locales/en-US/dedup-sidebar.json), counts, times and shares as the
 * tab writes them, a request to the runtime and its error in words, and the
 * pieces every panel lays out (a section, a table, a chart's width).
 */
(function () {
    "use strict";
    var sidebar = window.TelemetryDedupSidebar = window.TelemetryDedupSidebar || { parts: {} };

    sidebar.parts.format = function (tab) {
        function t(key, substitutions) {
            return tab._("dedup-sidebar." + key, substitutions);
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

        /** A chart axis's tick: a whole percent. */
        function axisPercent(fraction) {
            return Math.round(fraction * 100) + "%";
        }

        function rate(value) {
            return value < 10 ? String(Math.round(value * 10) / 10) : thousands(Math.round(value));
        }

        /** The request's error, worded from the catalog by its code. */
        function errorText(xhr) {
            var error = xhr && xhr.responseJSON && xhr.responseJSON.error;
            if (!error) { return t("errors.request", { detail: (xhr && (xhr.status + " " + xhr.statusText)) || "" }); }
            var substitutions = $.extend({}, error);
            var lists = { seconds: "whatIf.seconds", metres: "whatIf.metres", deadbands: "whatIf.deadbands" };
            if (substitutions.list) { substitutions.list = t(lists[substitutions.list] || "whatIf.metres"); }
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

        /** The runtime's address of one node (`suffix`: what is asked of it, e.g. "/what-if"). */
        function nodeUrl(entry, suffix) {
            return tab.base + "/" + encodeURIComponent(entry.summary.id) + (suffix || "");
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

        /** A list of rows into `box`: a table, or the `none` text when there are none. */
        function tableOrNone(box, columns, rows, none) {
            if (!rows || rows.length === 0) {
                box.append($('<div class="dedup-sb-none"></div>').text(none));
                return false;
            }
            box.append(table(columns, rows));
            return true;
        }

        function section(body, className, title, help) {
            var el = $('<div class="dedup-sb-section"></div>').addClass(className).appendTo(body);
            $("<h4></h4>").text(title).appendTo(el);
            if (help) { $('<div class="dedup-sb-help"></div>').text(help).appendTo(el); }
            return el;
        }

        /** The width a chart is drawn at: its box's, so that its text shows at its own size (11 px), not scaled down. */
        function chartWidth(box, fallback) {
            var width = Math.round(box.width() || 0);
            return width >= 200 ? Math.min(width, 720) : fallback;
        }

        return {
            t: t,
            thousands: thousands,
            ago: ago,
            duration: duration,
            percent: percent,
            axisPercent: axisPercent,
            rate: rate,
            errorText: errorText,
            request: request,
            nodeUrl: nodeUrl,
            tableOrNone: tableOrNone,
            section: section,
            chartWidth: chartWidth
        };
    };
})();
