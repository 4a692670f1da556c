/* timeline.js - the viewer of `marktrace timeline FILE.html` (built into
 * marktrace as a C string: timeline_js.h; no backslashes here, the build
 * refuses them).  Plain JavaScript, no network.
 * Data: the JSON in <script id="data">: sections of rows, each row's
 * change points delta-coded [dt, state, aux, ...], ticks [dt, count, name, ...]
 * and the fields of ticks of one event [tick, "text", ...]; names and
 * ncolors: each marker's name and colour. */
(function () {
"use strict";
var D = JSON.parse(document.getElementById("data").textContent);
var ROW = 16, GAP = 2, LW = 230, AXIS = 34, SEC = 22, RM = 10;
var cv = document.getElementById("tl"), cx = cv.getContext("2d");
var tip = document.getElementById("tip");
var rows = [], heads = [], y = AXIS, NL = String.fromCharCode(10);

function decode(list) {
	var n = list.length / 3, t = new Float64Array(n), b = new Float64Array(n), c = new Int32Array(n), acc = 0;
	for (var i = 0; i < n; i++) {
		acc += list[3 * i];
		t[i] = acc;
		b[i] = list[3 * i + 1];
		c[i] = list[3 * i + 2];
	}
	return [t, b, c];
}
D.sections.forEach(function (sec) {
	heads.push({ title: sec.title, y: y });
	y += SEC;
	sec.rows.forEach(function (r) {
		var p = decode(r.p), k = decode(r.k), ft = {};
		for (var i = 0; i + 1 < (r.f || []).length; i += 2) ft[r.f[i]] = r.f[i + 1];
		rows.push({ label: r.label, info: r.info, cpu: sec.cpu, y: y, t: p[0], s: p[1], a: p[2],
			    end: r.e, kt: k[0], kc: k[1], kn: k[2], ft: ft });
		y += ROW + GAP;
	});
});
var H = y + 6, v0 = 0, v1 = Math.max(D.span, 1);

function plotWidth() { return cv.width - LW - RM; }
function scale() { return plotWidth() / (v1 - v0); }
function xOf(t) { return LW + (t - v0) * scale(); }
function tOf(x) { return v0 + (x - LW) / scale(); }
function fmt(ns) {
	var a = Math.abs(ns);
	if (a >= 1e9) return (ns / 1e9).toFixed(3) + " s";
	if (a >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
	if (a >= 1e3) return (ns / 1e3).toFixed(3) + " us";
	return Math.round(ns) + " ns";
}
/* index of the last element <= t, or -1 */
function lower(arr, t) {
	var lo = 0, hi = arr.length;
	while (lo < hi) {
		var mid = (lo + hi) >> 1;
		if (arr[mid] <= t) lo = mid + 1; else hi = mid;
	}
	return lo - 1;
}
/* Sub-pixel intervals: the first state reaching a pixel colours it. */
function drawRow(r) {
	var sc = scale(), right = cv.width - RM, drawn = -1, i = Math.max(0, lower(r.t, v0));
	for (; i < r.t.length; i++) {
		var a = r.t[i], b = i + 1 < r.t.length ? r.t[i + 1] : r.end;
		if (a >= v1) break;
		if (b <= v0 || r.s[i] === 0) continue;
		var x0 = Math.floor(LW + (Math.max(a, v0) - v0) * sc), x1 = Math.floor(LW + (Math.min(b, v1) - v0) * sc);
		if (x1 <= x0) x1 = x0 + 1;
		if (x1 <= drawn) continue;
		if (x0 < drawn) x0 = drawn;
		cx.fillStyle = D.colors[r.s[i]];
		cx.fillRect(x0, r.y, Math.min(x1, right) - x0, ROW);
		drawn = x1;
		/* a CPU's row names the thread it ran where there is room */
		if (r.cpu && r.a[i] > 0 && Math.min(x1, right) - x0 > 40 && D.tn[r.a[i]]) {
			cx.save();
			cx.beginPath();
			cx.rect(x0, r.y, Math.min(x1, right) - x0, ROW);
			cx.clip();
			cx.fillStyle = "#000000";
			cx.font = "10px sans-serif";
			cx.fillText(D.tn[r.a[i]], x0 + 2, r.y + ROW / 2);
			cx.restore();
		}
	}
	/* ticks in their marker's colour (a pixel: its first tick's); under
	 * a pixel of several events their number, where it fits */
	var px = [], pc = [];
	drawn = -1;
	for (var j = Math.max(0, lower(r.kt, v0)); j < r.kt.length; j++) {
		var t = r.kt[j];
		if (t < v0) continue;
		if (t > v1) break;
		var x = Math.floor(LW + (t - v0) * sc);
		if (x >= right) break;
		if (x === drawn) { pc[pc.length - 1] += r.kc[j]; continue; }
		cx.fillStyle = D.ncolors[r.kn[j]] || D.tick;
		cx.fillRect(x, r.y, 1, ROW / 2);
		px.push(x);
		pc.push(r.kc[j]);
		drawn = x;
	}
	cx.save();
	cx.font = "8px sans-serif";
	cx.fillStyle = D.count;
	var free = 0;
	for (var q = 0; q < px.length; q++) {
		if (pc[q] < 2 || px[q] < free) continue;
		var w = cx.measureText(String(pc[q])).width;
		if (px[q] + 1 + w > right) continue;
		cx.fillText(String(pc[q]), px[q] + 1, r.y + ROW - 4);
		free = px[q] + 3 + w;
	}
	cx.restore();
}
function niceStep(ns) {
	var p = Math.pow(10, Math.floor(Math.log10(ns))), m = ns / p;
	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}
function draw() {
	cv.width = Math.max(640, window.innerWidth - 20);
	cv.height = H;
	cx.fillStyle = "#ffffff";
	cx.fillRect(0, 0, cv.width, cv.height);
	cx.textBaseline = "middle";
	cx.font = "11px sans-serif";
	var step = niceStep((v1 - v0) / 10);
	for (var t = Math.ceil(v0 / step) * step; t <= v1; t += step) {
		var x = Math.round(xOf(t));
		cx.fillStyle = "#eeeeee";
		cx.fillRect(x, AXIS - 4, 1, H - AXIS);
		cx.fillStyle = "#000000";
		cx.fillRect(x, AXIS - 10, 1, 6);
		cx.fillText(fmt(t), x + 3, AXIS - 20);
	}
	cx.fillStyle = "#000000";
	cx.fillRect(LW, AXIS - 4, plotWidth(), 1);
	cx.font = "bold 13px sans-serif";
	heads.forEach(function (h) { cx.fillStyle = "#000000"; cx.fillText(h.title, 4, h.y + SEC / 2); });
	cx.font = "12px sans-serif";
	rows.forEach(function (r) {
		cx.fillStyle = "#000000";
		cx.fillText(r.label, 4, r.y + ROW / 2, LW - 8);
		drawRow(r);
	});
	document.getElementById("range").textContent =
		fmt(v0) + " .. " + fmt(v1) + " (" + fmt(v1 - v0) + " of " + fmt(D.span) + ")";
}
function setView(a, b) {
	var w = b - a, span = Math.max(D.span, 1);
	if (w < 10) { var m = (a + b) / 2; a = m - 5; b = m + 5; w = 10; }
	if (w >= span) { a = 0; b = span; }
	if (a < 0) { b -= a; a = 0; }
	if (b > span) { a -= b - span; b = span; }
	v0 = a; v1 = b;
	draw();
}
function zoom(f, x) {
	var t = tOf(x === undefined ? LW + plotWidth() / 2 : Math.max(LW, x));
	setView(t - (t - v0) * f, t + (v1 - t) * f);
}
function pan(f) { var d = (v1 - v0) * f; setView(v0 + d, v1 + d); }
function auxText(r, s, a) {
	var n = D.states[s];
	if (r.cpu) return a > 0 ? n + ": " + (D.tn[a] || "tid " + a) : n;
	if (s === D.S.syscall) return n + " " + (D.sys[a] || a);
	if (s === D.S.irq || s === D.S.softirq) return n + " " + a;
	if (s === D.S.running) return n + " on cpu " + a;
	if (s === D.S.trap && a >= 0) return n + " " + a;
	return n;
}
/* The ticks within 2 pixels of time t: one event with its fields, or
 * how many there are of each marker. */
function tickText(r, t) {
	var d = 2 / scale(), k = lower(r.kt, t + d), n = 0, per = {}, order = [], a = 0, b = 0, one = -1;
	for (; k >= 0 && r.kt[k] >= t - d; k--) {
		var name = D.names[r.kn[k]];
		if (!(name in per)) { per[name] = 0; order.unshift(name); }
		per[name] += r.kc[k];
		n += r.kc[k];
		a = r.kt[k];
		if (!b) b = r.kt[k];
		one = k;
	}
	if (!n) return "";
	if (n === 1)
		return NL + D.names[r.kn[one]] + " at " + fmt(r.kt[one]) + (r.ft[one] ? NL + "  " + r.ft[one] : "");
	var text = NL + n + " events from " + fmt(a) + " to " + fmt(b) + ":";
	order.forEach(function (name) { text += NL + "  " + per[name] + " " + name; });
	return text;
}
function hover(e) {
	var r = null;
	rows.forEach(function (q) { if (e.offsetY >= q.y && e.offsetY < q.y + ROW) r = q; });
	if (!r || e.offsetX < LW) { tip.style.display = "none"; return; }
	var t = tOf(e.offsetX), i = lower(r.t, t), text = r.label + (r.info ? " (" + r.info + ")" : "");
	if (i >= 0) {
		var b = i + 1 < r.t.length ? r.t[i + 1] : r.end;
		if (t < b && r.s[i]) text += NL + auxText(r, r.s[i], r.a[i]) + " from " + fmt(r.t[i]) + " for " + fmt(b - r.t[i]);
	}
	text += tickText(r, t);
	tip.textContent = text;
	tip.style.display = "block";
	tip.style.left = (e.pageX + 12) + "px";
	tip.style.top = (e.pageY + 12) + "px";
}
var drag = null;
cv.addEventListener("wheel", function (e) { e.preventDefault(); zoom(e.deltaY < 0 ? 0.8 : 1.25, e.offsetX); }, { passive: false });
cv.addEventListener("mousedown", function (e) { drag = { x: e.offsetX, a: v0, b: v1 }; });
window.addEventListener("mouseup", function () { drag = null; });
cv.addEventListener("mousemove", function (e) {
	if (drag) {
		var d = (e.offsetX - drag.x) / scale();
		setView(drag.a - d, drag.b - d);
	} else {
		hover(e);
	}
});
cv.addEventListener("mouseleave", function () { tip.style.display = "none"; });
cv.addEventListener("dblclick", function (e) { zoom(e.shiftKey ? 2 : 0.5, e.offsetX); });
document.getElementById("zin").onclick = function () { zoom(0.5); };
document.getElementById("zout").onclick = function () { zoom(2); };
document.getElementById("left").onclick = function () { pan(-0.25); };
document.getElementById("right").onclick = function () { pan(0.25); };
document.getElementById("all").onclick = function () { setView(0, D.span); };
window.addEventListener("keydown", function (e) {
	if (e.key === "+" || e.key === "=") zoom(0.5);
	else if (e.key === "-") zoom(2);
	else if (e.key === "0") setView(0, D.span);
	else if (e.key === "ArrowLeft") pan(-0.25);
	else if (e.key === "ArrowRight") pan(0.25);
});
window.addEventListener("resize", draw);
var legend = document.getElementById("legend");
D.shown.forEach(function (s) {
	var box = document.createElement("span");
	box.className = "key";
	box.style.background = D.colors[s];
	legend.appendChild(box);
	legend.appendChild(document.createTextNode(D.states[s] + "  "));
});
/* a tick colour per marker, named */
D.names.forEach(function (name, i) {
	var tk = document.createElement("span");
	tk.className = "key marker";
	tk.style.background = D.ncolors[i];
	legend.appendChild(tk);
	legend.appendChild(document.createTextNode(name + "  "));
});
var m = /^#([0-9.]+)-([0-9.]+)$/.exec(location.hash);
if (m) setView(+m[1] * 1e9, +m[2] * 1e9); else draw();
})();
