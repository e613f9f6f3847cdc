/*
 * view_40_timeline.js — #timeline: one canvas lane per thread (the leaf
 * function of each time bin), per GPU stream (its operations) and per thread
 * calling the CUDA API, lines from launches to their kernels, from
 * html_data.c's binned slices.  Wheel or W/S zoom around the pointer, drag or
 * A/D and the arrow keys pan, 0 resets, a click shows the slice.  Drawing
 * skips slices narrower than a pixel after the last drawn one, so a frame
 * costs about lanes x width rectangles whatever the slice count.
 */
'use strict';
CBN.view({
	id: 'timeline', title: 'Timeline',
	has: function (d) { return d.html && d.html.timeline && d.html.timeline.lanes.length; },
	render: function (el, d) {
		var C = CBN, tl = d.html.timeline, names = d.html.names || [], lanes = tl.lanes, v = this;
		var LANE = 22, LABEL = 180, canvas = C.el('canvas', { tabindex: '0' });
		var info = C.el('div', { cls: 'tl-info' }, 'wheel or W/S: zoom \u2014 drag or A/D: pan \u2014 0: reset');
		var t0 = 0, t1 = tl.span_ns || 1, drag = null, pending = false;
		el.appendChild(C.el('h2', {}, 'Timeline'));
		el.appendChild(C.el('p', { cls: 'muted' }, lanes.length + ' lanes; CPU lanes show the function ' +
			'most samples of each ' + C.ns(tl.bin_ns) + ' bin were in' + (tl.threads_left_out
			? '; ' + tl.threads_left_out + ' quieter threads left out' : '')));
		el.appendChild(canvas);
		el.appendChild(info);
		function W() { return Math.max(400, el.clientWidth || 1200); }
		function draw() {
			pending = false;
			var w = W(), h = lanes.length * LANE + 20, dpr = window.devicePixelRatio || 1;
			canvas.width = w * dpr; canvas.height = h * dpr; canvas.style.height = h + 'px';
			var ctx = canvas.getContext('2d'), sc = (w - LABEL) / (t1 - t0);
			ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
			ctx.font = '11px ui-monospace, monospace';
			ctx.textBaseline = 'middle';
			v.drawnLanes = 0;
			v.drawnRects = 0;
			lanes.forEach(function (l, li) {
				var y = li * LANE, s = l.slices, lastX = -1, j = firstAt(s, t0);
				ctx.fillStyle = li % 2 ? '#f8f9fa' : '#fff';
				ctx.fillRect(0, y, w, LANE);
				for (; j + 2 < s.length && s[j] < t1; j += 3) {
					var x0 = LABEL + (s[j] - t0) * sc, x1 = LABEL + (s[j] + s[j + 1] - t0) * sc;
					if (x1 < LABEL || x1 - lastX < 0.5) continue;
					x0 = Math.max(x0, LABEL);
					var nm = (names[s[j + 2]] || ['?'])[0];
					ctx.fillStyle = l.kind === 'gpu' ? '#37b24d' : l.kind === 'api' ? '#9775fa'
						: C.color(nm);
					ctx.fillRect(x0, y + 2, Math.max(1, x1 - x0), LANE - 4);
					if (x1 - x0 > 40) {
						ctx.fillStyle = '#000';
						ctx.save(); ctx.beginPath(); ctx.rect(x0, y, x1 - x0 - 2, LANE); ctx.clip();
						ctx.fillText(nm, x0 + 2, y + LANE / 2); ctx.restore();
					}
					lastX = x1;
					v.drawnRects++;
				}
				ctx.fillStyle = '#fff';
				ctx.fillRect(0, y, LABEL, LANE);
				ctx.fillStyle = l.kind === 'gpu' ? '#2b8a3e' : l.kind === 'api' ? '#6741d9' : '#1d2330';
				ctx.fillText(l.name.slice(0, 26), 4, y + LANE / 2);
				v.drawnLanes++;
			});
			/* launch -> kernel flows whose launch or kernel is in view */
			var fl = tl.flows || [], nf = 0;
			ctx.strokeStyle = 'rgba(103,65,217,0.55)';
			ctx.beginPath();
			for (var f = 0; f + 3 < fl.length && nf < 1000; f += 4) {
				if ((fl[f] < t0 || fl[f] > t1) && (fl[f + 2] < t0 || fl[f + 2] > t1)) continue;
				var ax = LABEL + (fl[f] - t0) * sc, gx = LABEL + (fl[f + 2] - t0) * sc;
				var ay = fl[f + 1] * LANE + LANE / 2, gy = fl[f + 3] * LANE + LANE / 2;
				ctx.moveTo(Math.max(LABEL, ax), ay);
				ctx.lineTo(Math.max(LABEL, gx), gy);
				nf++;
			}
			ctx.stroke();
			v.drawnFlows = nf;
			ctx.fillStyle = '#667085';
			for (var k = 0; k <= 5; k++) {
				var tx = LABEL + k * (w - LABEL) / 5;
				ctx.fillText(C.ns(t0 + k * (t1 - t0) / 5), Math.min(tx, w - 60), lanes.length * LANE + 10);
			}
		}
		/* index of the first slice that may reach t (slices sorted by start;
		 * a slice is never longer than the lane's span, so step back one) */
		function firstAt(s, t) {
			var lo = 0, hi = s.length / 3;
			while (lo < hi) { var m = (lo + hi) >> 1; if (s[3 * m] < t) lo = m + 1; else hi = m; }
			return Math.max(0, lo - 1) * 3;
		}
		function redraw() { if (!pending) { pending = true; requestAnimationFrame(draw); } }
		function zoom(f, at) {
			var span = t1 - t0, c = t0 + at * span, ns = Math.max(1000, Math.min(tl.span_ns, span * f));
			t0 = Math.max(0, c - at * ns); t1 = Math.min(tl.span_ns, t0 + ns); t0 = Math.max(0, t1 - ns);
			redraw();
		}
		function pan(f) {
			var span = t1 - t0, d0 = Math.max(-t0, Math.min(tl.span_ns - t1, f * span));
			t0 += d0; t1 += d0; redraw();
		}
		function frac(ev) {
			var r = canvas.getBoundingClientRect();
			return Math.max(0, Math.min(1, (ev.clientX - r.left - LABEL) / (r.width - LABEL)));
		}
		canvas.addEventListener('wheel', function (ev) {
			ev.preventDefault(); zoom(ev.deltaY > 0 ? 1.25 : 0.8, frac(ev)); }, { passive: false });
		canvas.addEventListener('mousedown', function (ev) { drag = { x: ev.clientX, t0: t0, t1: t1, moved: 0 }; });
		window.addEventListener('mouseup', function () { setTimeout(function () { drag = null; }, 0); });
		canvas.addEventListener('mousemove', function (ev) {
			if (!drag) return;
			var r = canvas.getBoundingClientRect(), dt = (ev.clientX - drag.x) / (r.width - LABEL) * (drag.t1 - drag.t0);
			drag.moved = Math.abs(ev.clientX - drag.x);
			var w0 = drag.t1 - drag.t0, n0 = Math.max(0, Math.min(tl.span_ns - w0, drag.t0 - dt));
			t0 = n0; t1 = n0 + w0; redraw();
		});
		canvas.addEventListener('click', function (ev) {
			if (drag && drag.moved > 3) return;
			var r = canvas.getBoundingClientRect(), li = Math.floor((ev.clientY - r.top) / LANE);
			var t = t0 + frac(ev) * (t1 - t0), l = lanes[li];
			if (!l) return;
			var s = l.slices, j = firstAt(s, t);
			for (; j + 2 < s.length && s[j] <= t; j += 3) if (t < s[j] + s[j + 1]) {
				var nm = names[s[j + 2]] || ['?', '', 0];
				info.textContent = l.name + ': ' + nm[0] + '  at ' + C.ns(s[j]) + ' for ' + C.ns(s[j + 1]) +
					(nm[1] ? '  ' + nm[1].split('/').pop() + ':' + nm[2] : '');
				v.selected = nm[0];
				return;
			}
		});
		canvas.addEventListener('keydown', function (ev) {
			var k = ev.key.toLowerCase();
			if (k === 'w' || k === '+') zoom(0.8, 0.5);
			else if (k === 's' || k === '-') zoom(1.25, 0.5);
			else if (k === 'a' || k === 'arrowleft') pan(-0.1);
			else if (k === 'd' || k === 'arrowright') pan(0.1);
			else if (k === '0') { t0 = 0; t1 = tl.span_ns; redraw(); }
			else return;
			ev.preventDefault();
		});
		v.view = function () { return [t0, t1]; };
		v.keys = function (k) { canvas.dispatchEvent(new KeyboardEvent('keydown', { key: k })); };
		v.drawNow = draw;
		draw();
		window.addEventListener('resize', redraw);
	},
	selftests: {
		/* lanes drawn, then W zooms in and D pans right (drawn synchronously) */
		lanes: function () {
			var C = CBN, v = CBN.views.filter(function (x) { return x.id === 'timeline'; })[0];
			var span0 = v.view()[1] - v.view()[0];
			v.keys('w'); v.drawNow();
			var z = v.view();
			C.check(z[1] - z[0] < span0, 'W did not zoom in');
			v.keys('d'); v.drawNow();
			C.check(v.view()[0] > z[0] || z[1] >= span0, 'D did not pan');
			v.keys('0'); v.drawNow();
			return 'lanes=' + v.drawnLanes + ' rects=' + v.drawnRects + ' flows=' + v.drawnFlows;
		}
	}
});
