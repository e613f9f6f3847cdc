/*
 * lib_chart.js — the page's charts, drawn as SVG at their box's width (and
 * again when it changes): axes with ticks at round values in the data's
 * unit, gridlines, a legend, a tooltip per bar or point.  C.ticks gives
 * the round ticks the timeline's axis uses too.
 */
'use strict';
(function (C) {
	var NS = 'http://www.w3.org/2000/svg';

	/* Round ticks over [lo, hi]: about n steps of 1, 2 or 5 times a power
	 * of ten of the unit (base 1024 for bytes, so "256 MiB" not "268 MB"). */
	C.ticks = function (lo, hi, n, kind) {
		var span = hi - lo, unit = 1, out = [], k, step, m, p;
		if (!(span > 0)) return { step: 1, ticks: [lo], unit: 1 };
		if (kind === 'bytes') while (unit * 1024 <= Math.max(Math.abs(lo), Math.abs(hi))) unit *= 1024;
		var raw = span / unit / (n || 5);
		p = Math.pow(10, Math.floor(Math.log10(raw)));
		m = raw / p;
		step = (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p * unit;
		for (k = Math.ceil(lo / step - 1e-9); k * step <= hi + step * 1e-9; k++) out.push(k * step);
		return { step: step, ticks: out, unit: unit };
	};
	/* A tick's text: the unit of the axis's largest value, as few decimals as
	 * the step needs ("0 s", "0.5 s", "1 s"; "250 ms"; "64 MiB"). */
	C.tickText = function (kind, max, step) {
		var units, u, i, d;
		if (kind === 'pct') return function (v) { return Math.round(v * 100) + '%'; };
		if (kind === 'count') return function (v) { return C.count(v); };
		if (kind === 'cpus') return function (v) { return String(Math.round(v * 10) / 10); };
		if (kind === 'bytes') {
			units = [[1, 'B'], [1024, 'KiB'], [1048576, 'MiB'], [1073741824, 'GiB'], [1099511627776, 'TiB']];
		} else {
			units = [[1, 'ns'], [1e3, 'us'], [1e6, 'ms'], [1e9, 's']];
		}
		for (i = units.length - 1; i > 0 && Math.abs(max) < units[i][0]; i--) ;
		u = units[i];
		d = Math.max(0, Math.min(3, Math.ceil(-Math.log10(step / u[0]) - 1e-9)));
		return function (v) {
			var t = (v / u[0]).toFixed(d);
			if (d) t = t.replace(/\.?0+$/, '');
			return (t === '-0' ? '0' : t) + ' ' + u[1];
		};
	};

	function svg(tag, attrs, parent) {
		var e = document.createElementNS(NS, tag), k;
		for (k in attrs) e.setAttribute(k === 'cls' ? 'class' : k, attrs[k]);
		if (parent) parent.appendChild(e);
		return e;
	}
	function text(parent, x, y, s, attrs) {
		var t = svg('text', Object.assign({ x: x, y: y }, attrs || {}), parent);
		t.textContent = s;
		return t;
	}
	C.legend = function (series) {
		var lg = C.el('div', { cls: 'legend' });
		series.forEach(function (s) {
			/* s.isName: the series is named by a program, not in words */
			lg.appendChild(C.el('span', { title: s.help || '' }, C.el('i', { style: 'background:' + s.color +
				(s.dash ? ';height:3px' : '') }), s.isName ? C.el('span', { cls: 'name' }, s.name) : s.name));
		});
		return lg;
	};
	/* Draw into box at its width now and whenever that changes. */
	function sized(box, draw) {
		var w = 0;
		function go() {
			var nw = Math.max(320, box.clientWidth || 900);
			if (nw === w) return;
			w = nw;
			box.textContent = '';
			draw(w);
		}
		go();
		if (typeof ResizeObserver !== 'undefined') new ResizeObserver(go).observe(box);
	}
	/* The y axis: gridlines and ticks at round values; returns y(v). */
	function yAxis(g, kind, max, x0, x1, top, bottom, label) {
		var tk = C.ticks(0, max, 4, kind);
		/* the axis ends at the first tick at or above the largest value */
		if (tk.ticks[tk.ticks.length - 1] < max) tk.ticks.push(tk.ticks[tk.ticks.length - 1] + tk.step);
		var hi = tk.ticks[tk.ticks.length - 1], fmt = C.tickText(kind, hi, tk.step);
		function y(v) { return bottom - (bottom - top) * v / (hi || 1); }
		tk.ticks.forEach(function (v) {
			svg('line', { x1: x0, x2: x1, y1: y(v), y2: y(v), cls: 'grid', stroke: '#e3e7ee' }, g);
			text(g, x0 - 6, y(v) + 4, fmt(v), { 'text-anchor': 'end', cls: 'tick' });
		});
		if (label) text(g, 12, (top + bottom) / 2, label, { transform: 'rotate(-90 12 ' +
			(top + bottom) / 2 + ')', 'text-anchor': 'middle', cls: 'axis-label' });
		return y;
	}

	/*
	 * Stacked columns: spec {bars: [{label, parts: [v...], title}], series:
	 * [{name, color, help}], kind ('ns'), max (the axis's least top), ylabel,
	 * xlabel, height, onbar(i)}.
	 * Returns the box (an element to add to the page first: it is drawn at
	 * its width).
	 */
	C.stackedBars = function (box, spec) {
		var H = spec.height || 220, L = 70, R = 12, T = 10, B = 34;
		box.classList.add('chart');
		sized(box, function (W) {
			var s = svg('svg', { width: W, height: H, role: 'img' }, box), n = spec.bars.length;
			var max = 0;
			spec.bars.forEach(function (b) {
				var t = b.parts.reduce(function (x, y) { return x + (y || 0); }, 0);
				if (t > max) max = t;
			});
			/* spec.max: the axis reaches it at least (the machine's CPUs) */
			if (spec.max > max) max = spec.max;
			var y = yAxis(s, spec.kind || 'ns', max || 1, L, W - R, T, H - B, spec.ylabel);
			var slot = (W - L - R) / Math.max(1, n), bw = Math.max(1, Math.min(48, slot * 0.8));
			/* x labels that fit: every k-th bar */
			var every = Math.max(1, Math.ceil(60 / slot));
			spec.bars.forEach(function (b, i) {
				var x = L + i * slot + (slot - bw) / 2, acc = 0, g = svg('g', { cls: 'sbar' }, s);
				var tip = svg('title', {}, g);
				tip.textContent = b.title || (b.label + ': ' + spec.series.map(function (se, k) {
					return se.name + ' ' + C.ns(b.parts[k] || 0); }).join(', '));
				b.parts.forEach(function (v, k) {
					if (!(v > 0)) return;
					var y0 = y(acc), y1 = y(acc + v);
					svg('rect', { x: x, y: y1, width: bw, height: Math.max(0.5, y0 - y1),
						fill: spec.series[k].color }, g);
					acc += v;
				});
				if (spec.onbar) {
					g.style.cursor = 'pointer';
					g.addEventListener('click', function () { spec.onbar(i); });
				}
				if (i % every === 0)
					text(s, x + bw / 2, H - B + 16, b.label, { 'text-anchor': 'middle', cls: 'tick' });
			});
			svg('line', { x1: L, x2: W - R, y1: H - B, y2: H - B, stroke: '#98a2b3' }, s);
			if (spec.xlabel) text(s, L + (W - L - R) / 2, H - 4, spec.xlabel,
				{ 'text-anchor': 'middle', cls: 'axis-label' });
		});
		box.parentNode.insertBefore(C.legend(spec.series), box.nextSibling);
		return box;
	};

	/*
	 * Lines over time as steps (the value holds until the next point): spec
	 * {series: [{name, color, t: [ns...], v: [...], dash}], kind ('bytes'),
	 * t0, t1 (ns), bands: [{t0, t1, label}] (shaded alternately: steps),
	 * marks: [{t, v, label}] (a dot and its text: the peak), ylabel, height}.
	 */
	C.lineChart = function (box, spec) {
		var H = spec.height || 220, L = 78, R = 16, T = 14, B = 34;
		box.classList.add('chart');
		sized(box, function (W) {
			var s = svg('svg', { width: W, height: H, role: 'img' }, box), max = 0;
			spec.series.forEach(function (se) { se.v.forEach(function (v) { if (v > max) max = v; }); });
			(spec.marks || []).forEach(function (m) { if (m.v > max) max = m.v; });
			var t0 = spec.t0, t1 = spec.t1 > spec.t0 ? spec.t1 : spec.t0 + 1;
			function x(t) { return L + (W - L - R) * (t - t0) / (t1 - t0); }
			(spec.bands || []).forEach(function (b, i) {
				var a = Math.max(L, x(b.t0)), z = Math.min(W - R, x(b.t1));
				if (z <= a) return;
				var r = svg('rect', { x: a, y: T, width: Math.max(1, z - a), height: H - B - T,
					fill: i % 2 ? '#eef2f7' : '#e2e8f2', cls: 'band' }, s);
				svg('title', {}, r).textContent = b.label;
				/* the whole label where it fits, else "step N"; a number alone
				 * would read as a value, so a narrower band has none (its
				 * title gives it) */
				var full = b.label.length * 6.5 + 6, word = b.short ? ('step ' + b.short).length * 6.5 + 6 : 0;
				if (z - a > full) text(s, a + 3, T + 10, b.label, { cls: 'tick band-label' });
				else if (b.short && z - a > word) text(s, a + 3, T + 10, 'step ' + b.short, { cls: 'tick band-label' });
			});
			var y = yAxis(s, spec.kind || 'bytes', max || 1, L, W - R, T, H - B, spec.ylabel);
			var tk = C.ticks(0, t1 - t0, Math.max(2, Math.floor((W - L - R) / 110)), 'ns');
			var tf = C.tickText('ns', t1 - t0, tk.step);
			tk.ticks.forEach(function (v) {
				if (v > t1 - t0) return;
				svg('line', { x1: x(t0 + v), x2: x(t0 + v), y1: H - B, y2: H - B + 4, stroke: '#98a2b3' }, s);
				text(s, x(t0 + v), H - B + 16, tf(v), { 'text-anchor': 'middle', cls: 'tick' });
			});
			svg('line', { x1: L, x2: W - R, y1: H - B, y2: H - B, stroke: '#98a2b3' }, s);
			/* the first series drawn last: on top where they coincide */
			spec.series.slice().reverse().forEach(function (se) {
				var pts = [], i, px = null;
				for (i = 0; i < se.t.length; i++) {
					var xx = x(se.t[i]).toFixed(1), yy = y(se.v[i]).toFixed(1);
					if (px !== null) pts.push(xx + ',' + px);
					pts.push(xx + ',' + yy);
					px = yy;
				}
				if (px !== null) pts.push((W - R).toFixed(1) + ',' + px);
				svg('polyline', { points: pts.join(' '), fill: 'none', stroke: se.color,
					'stroke-width': 2, 'stroke-dasharray': se.dash ? '5 3' : 'none', cls: 'series' }, s);
			});
			(spec.marks || []).forEach(function (m) {
				var cx = x(m.t), cy = y(m.v), right = cx > W - 200;
				svg('circle', { cx: cx, cy: cy, r: 4, fill: '#c92a2a' }, s);
				text(s, cx + (right ? -8 : 8), Math.max(T + 10, cy - 6), m.label,
					{ 'text-anchor': right ? 'end' : 'start', cls: 'mark-label' });
			});
			if (spec.xlabel) text(s, L + (W - L - R) / 2, H - 4, spec.xlabel,
				{ 'text-anchor': 'middle', cls: 'axis-label' });
		});
		box.parentNode.insertBefore(C.legend(spec.series), box.nextSibling);
		return box;
	};
})(CBN);
