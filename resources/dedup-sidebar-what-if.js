/*
 * A sliding-window node's panel in the dedup sidebar (a part of the tab,
 * see dedup-sidebar.js): its asset lists (dedup-sidebar-assets.js), and the
 * what-if, the node's own decision code run by the runtime over its recent
 * input or an uploaded file (its columns picked in
 * dedup-sidebar-upload.js) for a grid of Heartbeat and Movement values,
 * drawn by dedup-chart.js with the parked jitter under it. A node in value
 * mode gets Heartbeat and Deadband values instead, and no jitter (a
 * reading is not parked). Clicking a point, or the suggested Movement,
 * puts it into the node's edit dialog; like any edit, it takes effect on
 * deploy.
 */
(function () {
    "use strict";
    var sidebar = window.TelemetryDedupSidebar = window.TelemetryDedupSidebar || { parts: {} };

    sidebar.parts.whatIf = function (tab) {
        var format = tab.format;
        var t = format.t;
        var thousands = format.thousands;
        var section = format.section;

        /** A node that decides on a reading's value, not a position. */
        function valueMode(entry) {
            return !!(entry.summary.settings && entry.summary.settings.mode === "value");
        }

        function build(body) {
            tab.assets.build(body);
            var whatIf = section(body, "dedup-sb-whatif", t("whatIf.title"), t("whatIf.help"));
            whatIf.find("h4").addClass("dedup-sb-whatif-title");
            var seconds = $('<div class="form-row"></div>').appendTo(whatIf);
            $("<label></label>").text(t("whatIf.seconds")).appendTo(seconds);
            $('<input type="text" class="dedup-sb-seconds">').val(tab.grid.seconds).appendTo(seconds);
            var metres = $('<div class="form-row dedup-sb-position-only"></div>').appendTo(whatIf);
            $("<label></label>").text(t("whatIf.metres")).appendTo(metres);
            $('<input type="text" class="dedup-sb-metres">').val(tab.grid.metres).appendTo(metres);
            var deadbands = $('<div class="form-row dedup-sb-value-only"></div>').appendTo(whatIf);
            $("<label></label>").text(t("whatIf.deadbands")).appendTo(deadbands);
            $('<input type="text" class="dedup-sb-deadbands">').val(tab.grid.deadbands || "").appendTo(deadbands);
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

        function wire(entry) {
            var el = entry.el;
            el.find(".dedup-sb-run-sample").on("click", function () {
                runWhatIf(entry, format.request("POST", format.nodeUrl(entry, "/what-if"), lists(entry)));
            });
            el.find(".dedup-sb-upload").on("click", function () { el.find(".dedup-sb-file").val("").trigger("click"); })
                .on("mouseenter focus", function () { $(this).attr("title", t("whatIf.uploadHelp", { limit: Math.round(tab.maxUploadBytes / 1024 / 1024) })); });
            el.find(".dedup-sb-file").on("change", function () {
                var file = this.files && this.files[0];
                if (!file) { return; }
                var tooLarge = sizeError(file);
                if (tooLarge) {
                    el.find(".dedup-sb-columns").addClass("hide").empty();
                    showError(entry, tooLarge);
                    return;
                }
                tab.upload.pickColumns(entry, file, function (choice) { uploadWhatIf(entry, file, choice); });
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

        /** The what-if's lists as typed: Heartbeat and Movement, or in value mode Heartbeat and Deadband. */
        function lists(entry) {
            var seconds = entry.el.find(".dedup-sb-seconds").val();
            if (valueMode(entry)) { return { seconds: seconds, deadbands: entry.el.find(".dedup-sb-deadbands").val() }; }
            return { seconds: seconds, metres: entry.el.find(".dedup-sb-metres").val() };
        }

        /** What the runtime's sample holds, beside the button that runs the what-if over it; the fields of the node's mode. */
        function render(entry) {
            var value = valueMode(entry);
            entry.el.find(".dedup-sb-whatif-title").text(t(value ? "whatIf.titleValue" : "whatIf.title"));
            entry.el.find(".dedup-sb-whatif .dedup-sb-position-only").toggle(!value);
            entry.el.find(".dedup-sb-whatif .dedup-sb-value-only").toggle(value);
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

        function renderLists(entry, details) {
            tab.assets.render(entry, details);
        }

        function setBusy(entry, busy, status) {
            entry.busy = busy;
            entry.el.find(".dedup-sb-run-sample, .dedup-sb-upload").prop("disabled", busy);
            entry.el.find(".dedup-sb-status").text(status || "").toggleClass("dedup-sb-error", false);
            if (!busy) { render(entry); }
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

        function runWhatIf(entry, xhr) {
            setBusy(entry, true, t("whatIf.running"));
            xhr.done(function (response) {
                setBusy(entry, false);
                renderWhatIf(entry, response);
                // The list too, so that the sample's size beside the button is the one just used.
                tab.list.fetchAll();
            }).fail(function (failed) {
                setBusy(entry, false);
                showError(entry, format.errorText(failed));
            });
        }

        /** Why a file cannot be sent: larger than the runtime takes; "" when it can. */
        function sizeError(file) {
            var limit = tab.maxUploadBytes;
            if (!(limit > 0 && file.size > limit)) { return ""; }
            return t("errors.tooLarge", { size: (file.size / 1024 / 1024).toFixed(1), limit: Math.round(limit / 1024 / 1024) });
        }

        /** The what-if over a file, its columns as `choice` names them (the runtime's query parameters). */
        function uploadWhatIf(entry, file, choice) {
            var tooLarge = sizeError(file);
            if (tooLarge) {
                showError(entry, tooLarge);
                return;
            }
            var query = $.param($.extend({ name: file.name }, lists(entry), choice));
            runWhatIf(entry, $.ajax({
                url: format.nodeUrl(entry, "/what-if/file?" + query),
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
                var columns = t(read.mapping.value !== undefined ? "whatIf.readAsValue" : "whatIf.readAs", {
                    asset: read.mapping.assetId, time: read.mapping.time, lat: read.mapping.lat, lon: read.mapping.lon, value: read.mapping.value,
                    count: thousands(read.zonelessTimes), zone: read.timeZone
                });
                el.find(".dedup-sb-source").append($('<div class="dedup-sb-help dedup-sb-read-as"></div>').text(columns + (read.reordered ? " " + t("whatIf.reordered") : "")));
            }
            // The chart draws its second axis as metres: in value mode it is given the deadbands (a cell's deadband as its minMetres).
            var value = result.jitter === null;
            var percentBand = value && entry.summary.settings.deadbandPercent === true;
            var current = response.current && { minSeconds: Number(response.current.minSeconds), minMetres: Number(value ? response.current.deadband : response.current.minMetres) };
            var cells = value ? result.cells.map(function (c) { return $.extend({}, c, { minMetres: c.deadband }); }) : result.cells;
            var chartBox = el.find(".dedup-sb-whatif .dedup-sb-chart");
            chartBox.html(tab.chart.whatIf({
                seconds: result.spec.seconds,
                metres: value ? result.spec.deadbands : result.spec.metres,
                cells: cells,
                current: current,
                suggestedMetres: value ? null : result.jitter.suggestedMetres
            }, {
                width: format.chartWidth(chartBox, 340), height: 230,
                texts: {
                    title: t("whatIf.chartTitle"),
                    legend: t("whatIf.legend"),
                    xAxis: t(value ? (percentBand ? "whatIf.xAxisDeadbandPercent" : "whatIf.xAxisDeadband") : "whatIf.xAxis"),
                    yAxis: t("whatIf.yAxis"),
                    heartbeat: function (s) { return t("whatIf.heartbeat", { seconds: s }); },
                    current: t("whatIf.current"),
                    suggested: function (m) { return t("whatIf.suggestedMark", { metres: m }); },
                    percent: format.axisPercent,
                    point: function (c) {
                        return t(value ? "whatIf.pointTipDeadband" : "whatIf.pointTip", {
                            seconds: c.minSeconds, metres: c.minMetres, deadband: c.minMetres, unit: percentBand ? "%" : "",
                            percent: format.percent(c.admittedFraction), admitted: thousands(c.admitted), received: thousands(c.received)
                        });
                    }
                }
            }));
            el.find(".dedup-sb-pick").text(t(value ? "whatIf.pickDeadband" : "whatIf.pick")).removeClass("hide");
            var bad = el.find(".dedup-sb-bad").empty();
            if (response.read && response.read.badRows > 0) {
                bad.append($("<div></div>").text(t("whatIf.badRows", { count: thousands(response.read.badRows), max: 10 })));
                var ul = $("<ul></ul>").appendTo(bad);
                response.read.firstBad.forEach(function (row) { $("<li></li>").text(t("whatIf.badRow", row)).appendTo(ul); });
            }
            renderJitter(entry, result.jitter);
        }

        function renderJitter(entry, jitter) {
            var box = entry.el.find(".dedup-sb-jitter");
            // Value mode: no position, no parked jitter.
            if (jitter === null) {
                box.addClass("hide");
                return;
            }
            box.removeClass("hide");
            if (jitter.p95Metres === null) {
                box.find(".dedup-sb-jitter-chart").empty();
                box.find(".dedup-sb-jitter-summary").text(t("jitter.none", { heartbeat: jitter.heartbeatSeconds }));
                box.find(".dedup-sb-suggestion").addClass("hide");
                return;
            }
            var jitterBox = box.find(".dedup-sb-jitter-chart");
            jitterBox.html(tab.chart.histogram(jitter, {
                width: format.chartWidth(jitterBox, 340), height: 150,
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
         * Puts a Heartbeat and Movement (in value mode a Deadband) into the
         * node's edit dialog: the open one when it is this node's, else a new
         * one. Nothing changes in the runtime until the user presses Done and
         * deploys.
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
                if (editing && $("#node-input-minSeconds").length && $("#node-input-minMetres").length && $("#node-input-deadband").length) {
                    setDialogFields(seconds, metres);
                } else if (++tries < 100) {
                    setTimeout(waitForDialog, 50);
                } else {
                    RED.notify(t("apply.failed"), "error");
                }
            })();
        }

        /** The dialog's fields, by its own Mode: the second value is the Deadband in value mode. */
        function setDialogFields(seconds, second) {
            var value = $("#node-input-mode").val() === "value";
            $("#node-input-minSeconds").val(String(seconds)).trigger("change");
            $(value ? "#node-input-deadband" : "#node-input-minMetres").val(String(second)).trigger("change");
            RED.notify(t(value ? "apply.doneDeadband" : "apply.done", { seconds: seconds, metres: second, deadband: second }), { type: "success", timeout: 4000 });
        }

        return { build: build, wire: wire, render: render, renderLists: renderLists };
    };
})();
