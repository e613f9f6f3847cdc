/*
 * view_40_timeline.js — #timeline: one canvas lane per thread (the leaf
 * function of each time bin), per GPU stream (its operations) and per thread
 * calling the CUDA API, lines from launches to their kernels, from
 * html_data.c's binned slices.  Wheel or W/S zoom around the pointer, drag or
 * A/D and the arrow keys pan, 0 resets, a click shows the slice.  Drawing
 * merges slices narrower than a pixel into one rectangle per pixel and
 * writes each lane's rectangles as pixels, so a frame costs at most about
 * one rectangle per pixel of each lane, whatever the slice count
 * (bench/html.sh measures the frame rate on 100 000 slices).
 */
'use strict';
CBN.view({
	id: 'timeline', title: 'Timeline',
	has: function (d) { return d.html && d.html.timeline && d.html.timeline.lanes.length; },
	render: function (el, d, params) {
		var C = CBN, tl = d.html.timeline, names = d.html.names || [], lanes = tl.lanes, v = this;
		var LANE = 22, LABEL = 180, canvas = C.el('canvas', { tabindex: '0' });
		var info = C.el('div', { cls: 'tl-info' }, 'wheel or W/S: zoom \u2014 drag or A/D: pan \u2014 0: reset');
		var t0 = 0, t1 = tl.span_ns || 1, drag = null, pending = false;
		v.params = params;
		el.appendChild(C.el('h2', {}, 'Timeline'));
		el.appendChild(C.el('p', { cls: 'muted' }, lanes.length + ' lanes; CPU lanes show the function ' +
			'most samples of each ' + C.ns(tl.bin_ns) + ' bin were in' + (tl.threads_left_out
			? '; ' + tl.threads_left_out + ' quieter threads left out' : '')));
		el.appendChild(canvas);
		el.appendChild(info);
		function W() { return Math.max(400, el.clientWidth || 1200); }
		/* a name's colour, once: parsing a CSS colour per rectangle was most
		 * of a frame's time */
		var colors = [], pixels = [], img = null, px = null, row = null, rgbaOf = {}, probe = null;
		/* a CSS colour as a pixel of ImageData (RGBA bytes, little-endian
		 * words): the browser parses it (fillStyle reads back as #rrggbb) */
		function rgba(col) {
			var v = rgbaOf[col];
			if (v !== undefined) return v;
			if (!probe) probe = document.createElement('canvas').getContext('2d');
			probe.fillStyle = '#000';
			probe.fillStyle = col;
			var h = String(probe.fillStyle), r = 0, g = 0, b = 0, m;
			if (h[0] === '#' && h.length === 7) {
				r = parseInt(h.substr(1, 2), 16); g = parseInt(h.substr(3, 2), 16); b = parseInt(h.substr(5, 2), 16);
			} else if ((m = /rgba?\((\d+),\s*(\d+),\s*(\d+)/.exec(h))) {
				r = +m[1]; g = +m[2]; b = +m[3];
			}
			return (rgbaOf[col] = ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0);
		}
		function colorOf(l, idx) {
			if (l.kind === 'gpu') return '#37b24d';
			if (l.kind === 'api') return '#9775fa';
			return colors[idx] || (colors[idx] = C.color((names[idx] || ['?'])[0]));
		}
		var PX_GPU = null, PX_API = null;
		function pixelOf(l, idx) {
			if (l.kind === 'gpu') return PX_GPU === null ? (PX_GPU = rgba(colorOf(l, idx))) : PX_GPU;
			if (l.kind === 'api') return PX_API === null ? (PX_API = rgba(colorOf(l, idx))) : PX_API;
			var p = pixels[idx];
			return p !== undefined ? p : (pixels[idx] = rgba(colorOf(l, idx)));
		}
		function draw() {
			pending = false;
			var w = W(), h = lanes.length * LANE + 20, dpr = window.devicePixelRatio || 1;
			/* resizing the canvas reallocates it: only when the size changed */
			if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
				canvas.width = Math.round(w * dpr); canvas.height = Math.round(h * dpr);
				canvas.style.height = h + 'px';
			}
			var ctx = canvas.getContext('2d'), sc = (w - LABEL) / (t1 - t0);
			ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
			ctx.clearRect(0, 0, w, h);
			ctx.font = '11px ui-monospace, monospace';
			ctx.textBaseline = 'middle';
			var cw = ctx.measureText('0').width || 7;
			v.drawnLanes = 0;
			v.drawnRects = 0;
			var labels = [], T = [performance.now()], pw = canvas.width, ph = canvas.height;
			/*
			 * The lanes' stripes and rectangles are written as pixels into
			 * one image, put on the canvas at once: thousands of fillRect or
			 * path rectangles cost most of a frame in the browser's
			 * rasterizer (41 fps on 100 k slices without a GPU).  All the
			 * rectangles of a lane share its rows, so each is written once
			 * into one row of pixels, and the row is copied to the lane's
			 * rows: a fill per rectangle and row cost 4 ms a frame.
			 */
			if (!img || img.width !== pw || img.height !== ph) {
				img = ctx.createImageData(pw, ph);
				px = new Uint32Array(img.data.buffer);
				row = new Uint32Array(pw);
			}
			/* the lane's last rectangle, in device pixels, not yet written:
			 * whole pixels (no anti-aliased edges), and the next rectangle
			 * of its colour that touches it extends it */
			var lx0 = 0, lx1 = 0, lc = 0, lhas = false;
			function flush() {
				if (!lhas) return;
				if (lx1 - lx0 < 16) for (var x = lx0; x < lx1; x++) row[x] = lc;
				else row.fill(lc, lx0, lx1);
				lhas = false;
			}
			function rect(x0, x1, c) {
				var X0 = Math.round(Math.round(x0) * dpr), X1 = Math.min(pw, Math.max(X0 + 1, Math.round(Math.round(x1) * dpr)));
				if (lhas && c === lc && X0 <= lx1) { if (X1 > lx1) lx1 = X1; return; }
				flush();
				lx0 = X0; lx1 = X1; lc = c; lhas = true;
				v.drawnRects++;
			}
			var stripe = [rgba('#fff'), rgba('#f8f9fa')];
			lanes.forEach(function (l, li) {
				var y = li * LANE, s = l.slices, j = firstAt(s, t0), run = false;
				var rx0 = 0, rx1 = 0, rdur = 0, rnm = 0, bg = stripe[li % 2];
				row.fill(bg);
				lhas = false;
				/*
				 * Level of detail: slices narrower than a pixel merge into
				 * one rectangle per pixel (a dense run) coloured as its
				 * longest slice, and touching rectangles of one colour merge
				 * (rect()), so a frame draws at most about one rectangle per
				 * pixel of each lane whatever the number of slices.
				 */
				for (; j + 2 < s.length && s[j] < t1; j += 3) {
					var x0 = LABEL + (s[j] - t0) * sc, x1 = LABEL + (s[j] + s[j + 1] - t0) * sc;
					if (x1 < LABEL) continue;
					x0 = Math.max(x0, LABEL);
					if (x1 - x0 < 1) {
						/* a run stops at a pixel: its colour says what
						 * filled that pixel most, not the whole run's */
						if (run && x0 - rx1 < 1 && x1 - rx0 <= 1) {
							if (x1 > rx1) rx1 = x1;
							if (s[j + 1] > rdur) { rdur = s[j + 1]; rnm = s[j + 2]; }
						} else {
							if (run) rect(rx0, rx1, pixelOf(l, rnm));
							run = true; rx0 = x0; rx1 = x1; rdur = s[j + 1]; rnm = s[j + 2];
						}
						continue;
					}
					if (run) { rect(rx0, rx1, pixelOf(l, rnm)); run = false; }
					rect(x0, x1, pixelOf(l, s[j + 2]));
					if (x1 - x0 > 40) {
						/* cut to the characters that fit (monospace): a clip
						 * region per label cost more than the rectangles */
						var nm = (names[s[j + 2]] || ['?'])[0], fit = Math.floor((Math.min(x1, w) - x0 - 4) / cw);
						labels.push(nm.length > fit ? nm.slice(0, Math.max(0, fit - 1)) + '\u2026' : nm,
							x0 + 2, y + LANE / 2);
					}
				}
				if (run) rect(rx0, rx1, pixelOf(l, rnm));
				flush();
				/* the stripe above and below the rectangles, the row between */
				var Y0 = Math.round(y * dpr), Y1 = Math.min(ph, Math.round((y + LANE) * dpr));
				var R0 = Math.round((y + 2) * dpr), R1 = Math.round((y + LANE - 2) * dpr);
				for (var yy = Y0; yy < Y1; yy++) {
					if (yy >= R0 && yy < R1) px.set(row, yy * pw);
					else px.fill(bg, yy * pw, (yy + 1) * pw);
				}
			});
			px.fill(0, Math.min(px.length, Math.round(lanes.length * LANE * dpr) * pw));
			T.push(performance.now());
			ctx.putImageData(img, 0, 0);
			T.push(performance.now());
			ctx.fillStyle = '#000';
			for (var q = 0; q < labels.length; q += 3) ctx.fillText(labels[q], labels[q + 1], labels[q + 2]);
			lanes.forEach(function (l, li) {
				var y = li * LANE;
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
			T.push(performance.now());
			v.parts = T;
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
		/* bench: swap in n synthetic slices (20 lanes, names of the page),
		 * then pan and zoom by program every animation frame for ms
		 * milliseconds, timing each draw; done(result line) at the end */
		v.bench = function (n, ms, done) {
			var per = Math.ceil(n / 20), span = 10e9, nn = Math.max(1, names.length), i, k;
			lanes.length = 0;
			colors = [];
			pixels = [];
			for (k = 0; k < 20; k++) {
				var sl = [], t = 0, step = span / per;
				for (i = 0; i < per; i++) {
					var dur = step * (0.2 + 0.8 * ((i * 7919 + k * 104729) % 97) / 97);
					sl.push(t, dur, (i * 31 + k) % nn);
					t += step;
				}
				lanes.push({ kind: 'cpu', name: 'synthetic ' + k, slices: sl });
			}
			tl.span_ns = span;
			tl.flows = [];
			v.keys('0');
			var parts = [0, 0, 0], frames = 0, times = [], rects = 0, start = performance.now(), f = 0;
			function frame(now) {
				/* 60 zoom-ins around moving points, then pans, then back out */
				var ph = f++ % 120;
				/* pending: zoom and pan must not queue a draw of their own
				 * (two draws a frame); this one is timed */
				pending = true;
				if (ph < 40) zoom(0.9, (ph % 10) / 10);
				else if (ph < 80) pan(ph % 20 < 10 ? 0.05 : -0.05);
				else zoom(1 / 0.9, 0.5);
				var a = performance.now();
				draw();
				times.push(performance.now() - a);
				for (var q = 0; q < 3; q++) parts[q] += v.parts[q + 1] - v.parts[q];
				rects += v.drawnRects;
				frames++;
				if (now - start < ms) { requestAnimationFrame(frame); return; }
				times.sort(function (x, y) { return x - y; });
				var mean = times.reduce(function (x, y) { return x + y; }, 0) / times.length;
				var fps = 1000 * frames / (performance.now() - start);
				done('slices=' + lanes.reduce(function (x, l) { return x + l.slices.length / 3; }, 0) +
					' frames=' + frames + ' fps=' + fps.toFixed(1) + ' ratio=' + (fps / 60).toFixed(2) +
					' draw_mean_ms=' + mean.toFixed(2) + ' draw_p95_ms=' +
					times[Math.floor(0.95 * (times.length - 1))].toFixed(2) + ' draw_max_fps=' +
					(1000 / mean).toFixed(0) + ' rects_per_frame=' + Math.round(rects / frames) + ' pixels/put/text_ms=' +
					parts.map(function (x) { return (x / frames).toFixed(2); }).join('/'));
			}
			requestAnimationFrame(frame);
		};
		draw();
		window.addEventListener('resize', redraw);
	},
	/* not in selftest=all: seconds long, real time (bench/html.sh) */
	manual: ['fps'],
	selftests: {
		/* #timeline&selftest=fps[&slices=N&ms=M]: frames per second while
		 * panning and zooming over N synthetic slices (default 100 000) */
		fps: function (sec, d) {
			var v = CBN.views.filter(function (x) { return x.id === 'timeline'; })[0];
			var p = v.params || {};
			v.bench(+p.slices || 100000, +p.ms || 3000, function (r) { CBN.note('bench timeline.fps ok ' + r); });
			return 'started';
		},
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
