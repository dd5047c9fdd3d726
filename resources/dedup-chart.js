/*
 * The pack's charts, as SVG text: the what-if (admitted fraction over
 * Movement, one line per Heartbeat), the parked-jitter histogram, the rate
 * sparkline and the TTL curve of the dedup sidebar. One small module for
 * the editor (served at resources/@telemetry-dedup/node-red-dedup/dedup-chart.js,
 * global TelemetryDedupChart) and for the dedup-tune command's --svg
 * (require()d), so both draw the same picture. It builds strings, not DOM,
 * and does not use the editor's bundled d3 (v3, which Node-RED plans to
 * drop).
 *
 * It holds no words: every title, label and tooltip is handed in by the
 * caller from its message catalog. Colours are the Okabe-Ito palette, told
 * apart with colour blindness; axes and text use currentColor, so the charts
 * follow the editor's theme.
 *
 * Each data colour is written twice: as the SVG attribute (what a file
 * viewer without CSS variables draws) and, winning over it where CSS
 * applies, as `var(--dedup-chart-colour-<n>, <attribute>)` in the style
 * (`--dedup-chart-<series>` for the rate lines). The sidebar's stylesheet
 * (nodes/dedup-sidebar.html) sets those variables for Node-RED 5's dark
 * theme; without them the palette below applies.
 */
/* global module -- CommonJS's, where dedup-tune require()s this file; the browser has none. */
(function (root, factory) {
    "use strict";
    if (typeof module === "object" && module.exports) {
        module.exports = factory();
    } else {
        root.TelemetryDedupChart = factory();
    }
}(typeof self !== "undefined" ? self : this, function () {
    "use strict";

    var PALETTE = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#7F7F7F", "#F0E442"];
    var SERIES = { admitted: "#009E73", suppressed: "#E69F00", rejected: "#D55E00" };
    var FONT = "font-family=\"-apple-system, 'Helvetica Neue', Arial, sans-serif\"";

    /** Palette colour `i` as a CSS value: the theme's variable, this palette's colour without it. */
    function colourVar(i) {
        return "var(--dedup-chart-colour-" + (i % PALETTE.length + 1) + "," + PALETTE[i % PALETTE.length] + ")";
    }

    function seriesVar(name) {
        return "var(--dedup-chart-" + name + "," + SERIES[name] + ")";
    }

    /**
     * The attributes that paint an element: `fill` and `stroke` given as
     * { hex, css } (or a plain value for both), `style` extra declarations.
     */
    function paint(fill, stroke, style) {
        var attrs = [];
        var css = [];
        [["fill", fill], ["stroke", stroke]].forEach(function (entry) {
            var value = entry[1];
            if (value === undefined) { return; }
            var hex = typeof value === "string" ? value : value.hex;
            attrs.push(entry[0] + "=\"" + hex + "\"");
            if (typeof value !== "string") { css.push(entry[0] + ":" + value.css); }
        });
        if (style) { css.push(style); }
        return attrs.join(" ") + (css.length ? " style=\"" + css.join(";") + "\"" : "");
    }

    function swatch(i) {
        return { hex: PALETTE[i % PALETTE.length], css: colourVar(i) };
    }

    function esc(text) {
        return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
    }

    /** A number for an axis or a label: at most 3 significant digits, no trailing zeros. */
    function num(value) {
        if (!isFinite(value)) { return String(value); }
        if (Math.abs(value) >= 1000) { return String(Math.round(value)); }
        return String(Number(value.toPrecision(3)));
    }

    /** A count for an axis: 950, 12k, 3.4M. */
    function compact(value) {
        if (value >= 1e6) { return num(value / 1e6) + "M"; }
        if (value >= 1e4) { return num(value / 1e3) + "k"; }
        return num(value);
    }

    function r1(value) { return Math.round(value * 10) / 10; }

    function text(string) {
        return typeof string === "function" ? string : function () { return string === undefined ? "" : String(string); };
    }

    /** x = f(value) over [d0, d1] onto [p0, p1], logarithmic when asked. */
    function scale(d0, d1, p0, p1, log) {
        if (log) {
            var l0 = Math.log(d0);
            var l1 = Math.log(d1);
            return function (v) { return l1 === l0 ? (p0 + p1) / 2 : p0 + (Math.log(v) - l0) / (l1 - l0) * (p1 - p0); };
        }
        return function (v) { return d1 === d0 ? (p0 + p1) / 2 : p0 + (v - d0) / (d1 - d0) * (p1 - p0); };
    }

    /** Under a label drawn over lines: the page's background (white outside the editor, e.g. the command's --svg file). */
    var HALO = "style=\"paint-order:stroke;stroke:var(--red-ui-secondary-background,#fff);stroke-width:3px;stroke-linejoin:round\"";

    function open(width, height, label, className) {
        return "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"" + esc(className) + "\" viewBox=\"0 0 " + width + " " + height +
            "\" width=\"" + width + "\" height=\"" + height + "\" role=\"img\" aria-label=\"" + esc(label) + "\" " + FONT +
            " font-size=\"11\" fill=\"currentColor\">";
    }

    function line(x1, y1, x2, y2, attrs) {
        return "<line x1=\"" + r1(x1) + "\" y1=\"" + r1(y1) + "\" x2=\"" + r1(x2) + "\" y2=\"" + r1(y2) + "\" " + (attrs || "") + "/>";
    }

    function label(x, y, string, attrs) {
        return "<text x=\"" + r1(x) + "\" y=\"" + r1(y) + "\" " + (attrs || "") + ">" + esc(string) + "</text>";
    }

    function polyline(points, colour, width, extra) {
        return "<polyline " + paint("none", colour) + " stroke-width=\"" + width + "\" stroke-linejoin=\"round\" points=\"" +
            points.map(function (p) { return r1(p[0]) + "," + r1(p[1]); }).join(" ") + "\" " + (extra || "") + "/>";
    }

    /** Horizontal grid lines and labels for a fraction axis (0 to 100 %). */
    function fractionAxis(out, x0, x1, y, percent) {
        [0, 0.25, 0.5, 0.75, 1].forEach(function (f) {
            out.push(line(x0, y(f), x1, y(f), "stroke=\"currentColor\" stroke-opacity=\"" + (f === 0 ? 0.5 : 0.15) + "\""));
            out.push(label(x0 - 4, y(f) + 4, percent(f), "text-anchor=\"end\" fill-opacity=\"0.75\""));
        });
    }

    /**
     * Points of different lines that would sit on one another (two Heartbeats
     * admitting the same fraction) are set side by side, so each can be
     * pointed at: the horizontal offset of each, by "seconds/metres".
     */
    function dodge(seconds, metres, byKey, y) {
        var offsets = {};
        metres.forEach(function (m) {
            var column = seconds.map(function (s) { return byKey[s + "/" + m]; }).filter(Boolean)
                .sort(function (a, b) { return a.admittedFraction - b.admittedFraction; });
            var i = 0;
            while (i < column.length) {
                var j = i + 1;
                while (j < column.length && Math.abs(y(column[j].admittedFraction) - y(column[j - 1].admittedFraction)) < 8) { j++; }
                for (var k = i; k < j; k++) { offsets[column[k].minSeconds + "/" + m] = (k - i - (j - i - 1) / 2) * 8; }
                i = j;
            }
        });
        return offsets;
    }

    /**
     * The what-if: admitted fraction over Movement, one line per Heartbeat.
     * model: { seconds: [..], metres: [..], cells: [{ minSeconds, minMetres, admittedFraction, admitted, received }],
     *          current: { minSeconds, minMetres } | null, suggestedMetres: number | null }
     * options: { width, height, texts: { title, xAxis, yAxis, heartbeat(seconds), current, suggested(metres),
     *            point(cell), percent(fraction) } }
     * Each point is a <circle class="dedup-chart-point" data-seconds data-metres>, for the caller to make clickable.
     */
    function whatIf(model, options) {
        options = options || {};
        var t = options.texts || {};
        var percent = t.percent || function (f) { return Math.round(f * 100) + "%"; };
        var heartbeat = text(t.heartbeat || function (s) { return num(s) + " s"; });
        var W = options.width || 640;
        var H = options.height || 360;
        var seconds = model.seconds.slice().sort(function (a, b) { return a - b; });
        var metres = model.metres.slice().sort(function (a, b) { return a - b; });
        var legendWidth = t.legend ? 76 : 70;
        var left = 44;
        var right = W - legendWidth - 8;
        var top = t.title ? 26 : 10;
        var bottom = H - 34;
        var xs = metres.slice();
        if (model.suggestedMetres > 0) { xs.push(model.suggestedMetres); }
        var xMin = Math.min.apply(null, xs);
        var xMax = Math.max.apply(null, xs);
        var log = xMin > 0 && xMax / xMin >= 8;
        var x = scale(xMin, xMax, left + 8, right - 8, log);
        var y = scale(0, 1, bottom, top, false);
        var out = [open(W, H, t.title || "", "dedup-chart dedup-chart-what-if")];
        if (t.title) { out.push(label(left, 15, t.title, "font-weight=\"bold\"")); }
        fractionAxis(out, left, right, y, percent);
        metres.forEach(function (m) {
            out.push(line(x(m), bottom, x(m), bottom + 4, "stroke=\"currentColor\" stroke-opacity=\"0.5\""));
            out.push(label(x(m), bottom + 15, num(m), "text-anchor=\"middle\" fill-opacity=\"0.75\""));
        });
        out.push(label((left + right) / 2, H - 4, t.xAxis || "", "text-anchor=\"middle\""));
        out.push(label(12, (top + bottom) / 2, t.yAxis || "", "text-anchor=\"middle\" transform=\"rotate(-90 12 " + r1((top + bottom) / 2) + ")\""));
        if (model.suggestedMetres > 0) {
            var sx = x(model.suggestedMetres);
            out.push(line(sx, top, sx, bottom, "class=\"dedup-chart-suggested\" stroke=\"currentColor\" stroke-opacity=\"0.6\" stroke-dasharray=\"4 3\""));
            if (t.suggested) { out.push(label(sx + 3, bottom - 6, text(t.suggested)(model.suggestedMetres), "fill-opacity=\"0.8\"")); }
        }
        var byKey = {};
        model.cells.forEach(function (c) { byKey[c.minSeconds + "/" + c.minMetres] = c; });
        var dx = dodge(seconds, metres, byKey, y);
        var points = [];
        seconds.forEach(function (s, i) {
            var colour = swatch(i);
            var row = metres.map(function (m) { return byKey[s + "/" + m]; }).filter(Boolean);
            out.push(polyline(row.map(function (c) { return [x(c.minMetres), y(c.admittedFraction)]; }), colour, 2, "class=\"dedup-chart-line\" data-seconds=\"" + s + "\""));
            row.forEach(function (c) {
                var tip = t.point ? t.point(c) : heartbeat(s) + ", " + num(c.minMetres) + ": " + percent(c.admittedFraction);
                points.push("<circle class=\"dedup-chart-point\" data-seconds=\"" + c.minSeconds + "\" data-metres=\"" + c.minMetres +
                    "\" cx=\"" + r1(x(c.minMetres) + (dx[s + "/" + c.minMetres] || 0)) + "\" cy=\"" + r1(y(c.admittedFraction)) + "\" r=\"4\" " +
                    // The white ring parts points that touch; the sidebar's stylesheet gives it the theme's background.
                    paint(colour, "#fff", "cursor:pointer") + " stroke-width=\"1\" tabindex=\"0\" role=\"button\"><title>" + esc(tip) + "</title></circle>");
            });
            var ly = top + 6 + (t.legend ? 16 : 0) + i * 16;
            out.push(line(right + 12, ly, right + 26, ly, paint(undefined, colour) + " stroke-width=\"2\""));
            out.push(label(right + 30, ly + 4, heartbeat(s)));
        });
        if (t.legend) { out.push(label(right + 12, top + 10, t.legend, "class=\"dedup-chart-legend-title\" font-weight=\"bold\"")); }
        var current = model.current && byKey[model.current.minSeconds + "/" + model.current.minMetres];
        if (current) {
            out.push("<circle class=\"dedup-chart-current\" cx=\"" + r1(x(current.minMetres)) + "\" cy=\"" + r1(y(current.admittedFraction)) +
                "\" r=\"9\" fill=\"none\" stroke=\"currentColor\" stroke-width=\"1.5\"><title>" + esc(t.current || "") + "</title></circle>");
            if (t.current) {
                // A halo of the background under the word, so that the lines it sits on do not cross it out.
                out.push(label(x(current.minMetres), y(current.admittedFraction) - 12, t.current, "text-anchor=\"middle\" font-weight=\"bold\" " + HALO));
            }
        }
        out.push(points.join(""));
        out.push("</svg>");
        return out.join("");
    }

    /**
     * The parked jitter: a bar per distance bin, the 95th percentile and the suggested Movement marked.
     * model: { binMetres, counts: [..], beyond, p95Metres, suggestedMetres }
     * options: { width, height, texts: { title, xAxis, yAxis, p95(metres), suggested(metres), bar(from, to, count), beyond(count) } }
     */
    function histogram(model, options) {
        options = options || {};
        var t = options.texts || {};
        var W = options.width || 640;
        var H = options.height || 220;
        var left = 44;
        var right = W - 12;
        var top = t.title ? 26 : 10;
        var bottom = H - 34;
        var bins = model.counts.length + (model.beyond > 0 ? 1 : 0);
        var max = Math.max.apply(null, model.counts.concat([model.beyond, 1]));
        var slot = (right - left) / Math.max(1, bins);
        var xm = function (metres) { return left + metres / model.binMetres * slot; };
        var y = scale(0, max, bottom, top, false);
        var out = [open(W, H, t.title || "", "dedup-chart dedup-chart-jitter")];
        if (t.title) { out.push(label(left, 15, t.title, "font-weight=\"bold\"")); }
        out.push(line(left, bottom, right, bottom, "stroke=\"currentColor\" stroke-opacity=\"0.5\""));
        [0, 0.5, 1].forEach(function (f) {
            var v = Math.round(max * f);
            out.push(label(left - 4, y(v) + 4, compact(v), "text-anchor=\"end\" fill-opacity=\"0.75\""));
        });
        model.counts.forEach(function (count, i) {
            var from = i * model.binMetres;
            var tip = t.bar ? t.bar(num(from), num(from + model.binMetres), count) : num(from) + "-" + num(from + model.binMetres) + ": " + count;
            out.push("<rect class=\"dedup-chart-bar\" x=\"" + r1(left + i * slot + 1) + "\" y=\"" + r1(y(count)) + "\" width=\"" + r1(Math.max(1, slot - 2)) +
                "\" height=\"" + r1(bottom - y(count)) + "\" " + paint(swatch(0)) + "><title>" + esc(tip) + "</title></rect>");
        });
        if (model.beyond > 0) {
            var bx = left + model.counts.length * slot;
            out.push("<rect class=\"dedup-chart-bar\" x=\"" + r1(bx + 1) + "\" y=\"" + r1(y(model.beyond)) + "\" width=\"" + r1(Math.max(1, slot - 2)) +
                "\" height=\"" + r1(bottom - y(model.beyond)) + "\" " + paint(swatch(6)) + "><title>" + esc(t.beyond ? t.beyond(model.beyond) : String(model.beyond)) + "</title></rect>");
        }
        var step = Math.max(1, Math.ceil(model.counts.length / 5));
        for (var i = 0; i <= model.counts.length; i += step) {
            out.push(label(left + i * slot, bottom + 15, num(i * model.binMetres), "text-anchor=\"middle\" fill-opacity=\"0.75\""));
        }
        out.push(label((left + right) / 2, H - 4, t.xAxis || "", "text-anchor=\"middle\""));
        out.push(label(12, (top + bottom) / 2, t.yAxis || "", "text-anchor=\"middle\" transform=\"rotate(-90 12 " + r1((top + bottom) / 2) + ")\""));
        var marks = [];
        if (model.p95Metres !== null && model.p95Metres !== undefined) {
            marks.push({ metres: model.p95Metres, text: t.p95 ? t.p95(num(model.p95Metres)) : "p95", className: "dedup-chart-p95", dash: "" });
        }
        if (model.suggestedMetres) {
            marks.push({ metres: model.suggestedMetres, text: t.suggested ? t.suggested(num(model.suggestedMetres)) : "", className: "dedup-chart-suggested", dash: "stroke-dasharray=\"4 3\"" });
        }
        marks.forEach(function (mark, k) {
            var mx = Math.min(right, xm(mark.metres));
            out.push(line(mx, top, mx, bottom, "class=\"" + mark.className + "\" " + paint(undefined, swatch(5)) + " stroke-width=\"1.5\" " + mark.dash));
            // Near the right edge the label goes to the left of its line.
            var leftOfLine = mx > right - 100;
            out.push(label(leftOfLine ? mx - 3 : mx + 3, top + 10 + k * 13, mark.text, "fill-opacity=\"0.9\"" + (leftOfLine ? " text-anchor=\"end\"" : "")));
        });
        out.push("</svg>");
        return out.join("");
    }

    /**
     * The rates of the last minutes, one line per series, as a small sparkline.
     * model: { bucketMs, admitted: [..], suppressed: [..], rejected: [..] } (counts per bucket, oldest first)
     * options: { width, height, stretch (fill the width given, no text), texts: { title, max(perSecond) } }
     */
    function rates(model, options) {
        options = options || {};
        var t = options.texts || {};
        var W = options.width || 240;
        var H = options.height || 44;
        var names = ["admitted", "suppressed", "rejected"];
        var perSecond = 1000 / model.bucketMs;
        var max = 0;
        names.forEach(function (n) { model[n].forEach(function (c) { max = Math.max(max, c * perSecond); }); });
        var scaleMax = max > 0 ? max : 1;
        var n = model.admitted.length;
        var x = scale(0, Math.max(1, n - 1), 1, W - 1, false);
        var y = scale(0, scaleMax, H - 2, 2, false);
        var out = [open(W, H, t.title || "", "dedup-chart dedup-chart-rates")];
        if (options.stretch) {
            // Drawn to fill whatever width it is given: no text inside, strokes kept thin.
            out[0] = out[0].replace(/ width="[^"]*" height="[^"]*"/, " width=\"100%\" height=\"" + H + "\" preserveAspectRatio=\"none\"");
        }
        out.push(line(0, H - 1.5, W, H - 1.5, "stroke=\"currentColor\" stroke-opacity=\"0.25\" vector-effect=\"non-scaling-stroke\""));
        names.forEach(function (name) {
            var values = model[name];
            if (name === "rejected" && values.every(function (v) { return v === 0; })) { return; }
            out.push(polyline(values.map(function (c, i) { return [x(i), y(c * perSecond)]; }), { hex: SERIES[name], css: seriesVar(name) }, 1.5,
                "class=\"dedup-chart-rate dedup-chart-rate-" + name + "\" vector-effect=\"non-scaling-stroke\""));
        });
        if (t.max && max > 0 && !options.stretch) { out.push(label(2, 9, t.max(num(max)), "fill-opacity=\"0.6\" font-size=\"9\"")); }
        out.push("</svg>");
        return out.join("");
    }

    /**
     * The TTL what-if: the fraction of replays a shorter Remember would have let through.
     * model: { points: [{ ttlSeconds, fraction, letThrough }], current: ttlSeconds }
     * options: { width, height, texts: { title, xAxis, yAxis, tick(seconds), point(point), current, percent(fraction) } }
     */
    function ttl(model, options) {
        options = options || {};
        var t = options.texts || {};
        var percent = t.percent || function (f) { return Math.round(f * 100) + "%"; };
        var tick = t.tick || function (s) { return num(s) + " s"; };
        var W = options.width || 640;
        var H = options.height || 220;
        var left = 44;
        var right = W - 16;
        var top = t.title ? 26 : 10;
        var bottom = H - 34;
        var pts = model.points;
        var xMin = pts.length ? pts[0].ttlSeconds : 1;
        var xMax = pts.length ? pts[pts.length - 1].ttlSeconds : 1;
        var x = scale(xMin, xMax, left + 8, right - 8, xMin > 0 && xMax / xMin >= 8);
        var y = scale(0, 1, bottom, top, false);
        var out = [open(W, H, t.title || "", "dedup-chart dedup-chart-ttl")];
        // From the chart's left edge, not the plot's: the sidebar's default width leaves no more room.
        if (t.title) { out.push(label(4, 15, t.title, "font-weight=\"bold\"")); }
        fractionAxis(out, left, right, y, percent);
        // A label per point where there is room, always the last (the node's own).
        var lastLabel = -Infinity;
        pts.forEach(function (p, i) {
            var px = x(p.ttlSeconds);
            var isLast = i === pts.length - 1;
            if (px - lastLabel < 34 && !isLast) { return; }
            if (isLast && px - lastLabel < 34 && out[out.length - 1].indexOf("dedup-chart-tick") !== -1) { out.pop(); }
            out.push(label(px, bottom + 15, tick(p.ttlSeconds), "class=\"dedup-chart-tick\" text-anchor=\"middle\" fill-opacity=\"0.75\" font-size=\"9\""));
            lastLabel = px;
        });
        out.push(label((left + right) / 2, H - 4, t.xAxis || "", "text-anchor=\"middle\""));
        out.push(label(12, (top + bottom) / 2, t.yAxis || "", "text-anchor=\"middle\" transform=\"rotate(-90 12 " + r1((top + bottom) / 2) + ")\""));
        out.push(polyline(pts.map(function (p) { return [x(p.ttlSeconds), y(p.fraction)]; }), swatch(3), 2, "class=\"dedup-chart-line\""));
        pts.forEach(function (p) {
            var isCurrent = p.ttlSeconds === model.current;
            out.push("<circle class=\"dedup-chart-point" + (isCurrent ? " dedup-chart-current" : "") + "\" data-ttl=\"" + p.ttlSeconds + "\" cx=\"" + r1(x(p.ttlSeconds)) +
                "\" cy=\"" + r1(y(p.fraction)) + "\" r=\"" + (isCurrent ? 5 : 3.5) + "\" " + paint(swatch(3)) + "><title>" +
                esc(t.point ? t.point(p) : tick(p.ttlSeconds) + ": " + percent(p.fraction)) + "</title></circle>");
        });
        out.push("</svg>");
        return out.join("");
    }

    /** Several charts one under the other, as one SVG document (the command's --svg file). */
    function stack(svgs, options) {
        options = options || {};
        var gap = options.gap === undefined ? 16 : options.gap;
        var width = 0;
        var height = 0;
        var inner = svgs.map(function (svg) {
            var size = /viewBox="0 0 ([\d.]+) ([\d.]+)"/.exec(svg);
            var w = size ? Number(size[1]) : 0;
            var h = size ? Number(size[2]) : 0;
            var placed = svg.replace(/^<svg /, "<svg x=\"0\" y=\"" + height + "\" ");
            width = Math.max(width, w);
            height += h + gap;
            return placed;
        });
        height = Math.max(0, height - gap);
        var background = options.background ? "<rect width=\"100%\" height=\"100%\" fill=\"" + options.background + "\"/>" : "";
        return "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + width + " " + height + "\" width=\"" + width + "\" height=\"" + height +
            "\"" + (options.colour ? " color=\"" + options.colour + "\"" : "") + ">" + background + inner.join("") + "</svg>";
    }

    // seriesColours: CSS values (the theme's variable, the palette's colour without it), for the sidebar's keys.
    return {
        whatIf: whatIf, histogram: histogram, rates: rates, ttl: ttl, stack: stack,
        seriesColours: { admitted: seriesVar("admitted"), suppressed: seriesVar("suppressed"), rejected: seriesVar("rejected") }
    };
}));
