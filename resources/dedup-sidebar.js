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
 * The tab is made of parts, a file each in resources/, which
 * nodes/dedup-sidebar.html loads:
 *
 *   dedup-sidebar-format.js    words from the catalog, numbers, requests, tables
 *   dedup-sidebar-list.js      the list of nodes: where, store, rates, totals
 *   dedup-sidebar-assets.js    a sliding-window node's asset lists: stuck, without
 *                              a fix, silent
 *   dedup-sidebar-what-if.js   a sliding-window node's panel: its asset lists, the
 *                              what-if, the jitter, a point into the dialog
 *   dedup-sidebar-upload.js    the what-if over a file: its column picker
 *   dedup-sidebar-sensor.js    a sensor node's panel: replays, the Remember what-if
 *
 * The editor may run those files in any order (it loads them side by
 * side), so each only adds its part to TelemetryDedupSidebar.parts: a
 * function that is given the tab (what the parts share: the catalog's
 * translator, the runtime's limits and time, the other parts) and returns
 * what the part offers. install(), run once they have all loaded, makes
 * them, the ones used by others first.
 *
 * All text comes from the plugin's catalog
 * (nodes/locales/en-US/dedup-sidebar.json) through the plugin's `_`.
 */
(function () {
    "use strict";
    var sidebar = window.TelemetryDedupSidebar = window.TelemetryDedupSidebar || { parts: {} };

    var TOPIC = "telemetry-dedup/insight";
    var TAB = "dedup";
    var DETAILS_EVERY_MS = 5000;
    var detailsTimer = null;

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
        var parts = sidebar.parts;
        var tab = {
            base: "dedup-sidebar/nodes",
            WINDOW: "sliding-window-dedup",
            _: plugin._,
            chart: window.TelemetryDedupChart,
            // From the runtime's node list (GET dedup-sidebar/nodes): 0 and blank until it first answers.
            maxUploadBytes: 0,
            grid: { seconds: "", metres: "", deadbands: "" },
            /** The runtime's clock at its last push or list. */
            serverTime: 0
        };
        tab.format = parts.format(tab);
        tab.upload = parts.upload(tab);
        tab.assets = parts.assets(tab);
        tab.whatIf = parts.whatIf(tab);
        tab.sensor = parts.sensor(tab);
        var list = tab.list = parts.list(tab);

        var content = $('<div class="dedup-sb"></div>');
        var toolbar = $('<div class="red-ui-sidebar-header dedup-sb-header"></div>').appendTo(content);
        list.countLine.appendTo(toolbar);
        $('<button type="button" class="red-ui-sidebar-header-button dedup-sb-refresh"><i class="fa fa-refresh"></i></button>')
            .attr("title", tab.format.t("list.refresh")).appendTo(toolbar)
            .on("click", function (event) {
                event.preventDefault();
                list.fetchAll();
                list.fetchOpenDetails();
            });
        $('<div class="dedup-sb-scroll"></div>').append(list.emptyNote, list.nodes).appendTo(content);

        RED.actions.add("telemetry-dedup:show-dedup-tab", function () { RED.sidebar.show(TAB); });
        RED.sidebar.addTab({
            id: TAB,
            label: tab.format.t("tab.label"),
            name: tab.format.t("tab.name"),
            iconClass: "fa fa-filter",
            content: content,
            enableOnEdit: true,
            pinned: true,
            action: "telemetry-dedup:show-dedup-tab",
            onchange: function () { list.fetchAll(); }
        });
        keepInTabBar();
        RED.comms.subscribe(TOPIC, function (topic, data) {
            if (data && Array.isArray(data.nodes)) { list.render(data.nodes, data.time); }
        });
        // One timer, this tab's, should the plugin ever be added again.
        if (detailsTimer !== null) { clearInterval(detailsTimer); }
        detailsTimer = setInterval(function () {
            if (content.is(":visible")) { list.fetchOpenDetails(); }
        }, DETAILS_EVERY_MS);
        list.fetchAll();
    }

    sidebar.install = install;
})();
