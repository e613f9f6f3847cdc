/*
 * view_40_timeline.js — #timeline, in the manner of Perfetto's: a lane per
 * step sequence, per thread and depth of ranges, per thread (the function
 * of each time bin), per thread calling the CUDA API and per GPU stream,
 * from html_data.c's slices.  It opens zoomed to where the activity is (the
 * capture windows, else the steps, else the GPU work and ranges, else every
 * lane's), with a time axis
 * of round ticks, slice labels where they fit, a legend per lane kind, and
 * the launch -> kernel flows of the slice pointed at or clicked as thin
 * arrows.  Wheel or W/S zoom around the pointer, drag or A/D and the arrow
 * keys pan, 0 resets to the whole run, a click names the slice.  Drawing
 * merges slices narrower than a pixel into one rectangle per pixel and
 * writes each lane's rectangles as pixels, so a frame costs at most about
 * one rectangle per pixel of each lane, whatever the slice count
 * (bench/html.sh measures the frame rate on 100 000 slices); steps and
 * ranges never merge with their neighbours.
 */
'use strict';
CBN.view({
	id: 'timeline', title: 'Timeline',
	has: function (d) { return d.html && d.html.timeline && d.html.timeline.lanes.length; },
	render: function (el, d, params) {
		var C = CBN, tl = d.html.timeline, names = d.html.names || [], v = this;
		var LANE = 22, LABEL = 190, AXIS = 22, canvas = C.el('canvas', { tabindex: '0' });
		var hasFlows = tl.lanes.some(function (l) { return l.kind === 'api' || l.kind === 'gpu'; });
		var info = C.el('div', { cls: 'tl-info' }, 'wheel or W/S: zoom \u2014 drag or A/D: pan \u2014 ' +
			'0: the whole run' + (hasFlows ? ' \u2014 point at a kernel or a launch for its flows' : ''));
		var drag = null, pending = false, hover = null, sel = null;
		var STEP = ['#4c6ef5', '#91a7ff'];
		var GPU = { kernel: '#37b24d', copy: '#1c7ed6', set: '#74c0fc' };
		var API = { launch: '#9775fa', sync: '#f76707', other: '#b197fc' };
		var lanes = order(tl.lanes, d.report.steps);
		var t0 = 0, t1 = tl.span_ns || 1, home = activity();
		t0 = home[0]; t1 = home[1];
		v.params = params;
		v.lanes = lanes;
		el.appendChild(C.el('h2', {}, 'Timeline'));
		el.appendChild(C.el('p', { cls: 'muted' }, lanes.length + (lanes.length === 1 ? ' lane' : ' lanes') + ' over ' + C.ns(tl.span_ns) +
			(home[2] ? '; opened on ' + home[2] + ' (0 shows the whole run)' : '') +
			'; CPU lanes show the function most samples of each ' + C.ns(tl.bin_ns) + ' were in' +
			(tl.threads_left_out ? '; ' + tl.threads_left_out + ' quieter threads left out' : '') + '.'));
		el.appendChild(canvas);
		el.appendChild(info);
		el.appendChild(legend());

		/* Lanes top to bottom: steps, ranges, threads, CUDA API, GPU
		 * streams (launches next to their kernels); each keeps its index in
		 * the data (flows name lanes by it). */
		function order(src, steps) {
			var rank = { step: 0, range: 1, cpu: 2, api: 3, gpu: 4 }, out = src.map(function (l, i) {
				l.orig = i; return l; });
			if (steps && steps.steps && steps.steps.length) {
				var sl = [], nm = [];
				steps.steps.forEach(function (s, k) {
					sl.push(s.start_ns, s.duration_ns, k);
					nm.push(['step ' + s.number, '', 0]);
				});
				out.push({ kind: 'step', name: 'steps (' + steps.what + ')', slices: sl, names: nm, orig: -1 });
			}
			return out.slice().sort(function (a, b) {
				return (rank[a.kind] - rank[b.kind]) || (a.orig - b.orig); });
		}
		/* Where the activity is: the capture windows (--capture), else the
		 * steps, else the GPU work, CUDA calls and ranges, else every
		 * lane's; padded 2 %. */
		function activity() {
			var lo = Infinity, hi = -Infinity, what = '';
			function ext(kinds) {
				lanes.forEach(function (l) {
					var s = l.slices;
					if (kinds.indexOf(l.kind) < 0 || s.length < 3) return;
					lo = Math.min(lo, s[0]);
					for (var j = 0; j + 2 < s.length; j += 3) hi = Math.max(hi, s[j] + s[j + 1]);
				});
			}
			var cap = (d.report.steps || {}).capture;
			if (cap && cap.controlled) {
				(cap.windows || []).forEach(function (w) {
					lo = Math.min(lo, w.start_ns); hi = Math.max(hi, w.end_ns); });
				if (hi > lo) what = 'the capture windows';
			}
			if (!(hi > lo)) { ext(['step']); if (hi > lo) what = 'the steps'; }
			if (!(hi > lo)) { ext(['gpu', 'api', 'range']); if (hi > lo) what = 'the GPU work and ranges'; }
			if (!(hi > lo)) { ext(['cpu']); what = ''; }
			if (!(hi > lo)) return [0, tl.span_ns || 1, ''];
			var pad = (hi - lo) * 0.02;
			lo = Math.max(0, lo - pad); hi = Math.min(tl.span_ns, hi + pad);
			if (hi - lo > 0.9 * tl.span_ns) return [0, tl.span_ns, ''];
			return [lo, Math.max(hi, lo + 1000), what];
		}
		function legend() {
			var lg = C.el('div', { cls: 'tl-legend' });
			function row(kind, items) {
				var r = C.el('div', { cls: 'legend' }, C.el('b', {}, kind));
				items.forEach(function (x) {
					r.appendChild(C.el('span', {}, x[0] ? C.el('i', { style: 'background:' + x[0] }) : null, x[1]));
				});
				lg.appendChild(r);
			}
			var kinds = {};
			lanes.forEach(function (l) { kinds[l.kind] = 1; });
			if (kinds.step) row('Steps', [[STEP[0], 'a step'], [STEP[1], 'the next']]);
			if (kinds.range) row('Ranges', [[null, 'NVTX and annotation ranges, a lane per thread and depth; ' +
				'colour = name']]);
			if (kinds.cpu) row('Threads', [[null, 'colour = the function on the CPU most of each bin; ' +
				'gaps: off the CPU']]);
			if (kinds.api) row('CUDA API', [[API.launch, 'launch'], [API.sync, 'synchronize'],
				[API.other, 'other call']]);
			if (kinds.gpu) row('GPU streams', [[GPU.kernel, 'kernel'], [GPU.copy, 'copy'],
				[GPU.set, 'set']]);
			if ((tl.flows || []).length) row('Flows', [[null, '\u2192 from a launch to its kernel: ' +
				'point at or click either']]);
			return lg;
		}
		function nameOf(l, idx) { return ((l.names || names)[idx] || ['?'])[0]; }
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
		/* the colour of slice j (name idx) of lane l */
		function colorOf(l, idx, j) {
			var n;
			if (l.kind === 'step') return STEP[(j / 3) & 1];
			if (l.kind === 'gpu') {
				n = nameOf(l, idx);
				return n.indexOf('[CUDA memset') === 0 ? GPU.set : n.indexOf('[CUDA mem') === 0 ? GPU.copy : GPU.kernel;
			}
			if (l.kind === 'api') {
				n = nameOf(l, idx);
				return /Synchronize$/.test(n) ? API.sync : /Launch/.test(n) ? API.launch : API.other;
			}
			return colors[idx] || (colors[idx] = C.color(nameOf(l, idx)));
		}
		/* lanes whose slices never merge with a neighbour of their colour */
		function apart(l) { return l.kind === 'step' || l.kind === 'range'; }
		function pixelOf(l, idx, j) {
			if (l.kind === 'cpu') {
				var p = pixels[idx];
				return p !== undefined ? p : (pixels[idx] = rgba(colorOf(l, idx, j)));
			}
			return rgba(colorOf(l, idx, j));
		}
		function draw() {
			pending = false;
			var w = W(), h = AXIS + lanes.length * LANE + 4, dpr = window.devicePixelRatio || 1;
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
			 * of its colour that touches it extends it (but in lanes whose
			 * slices stay apart, where a pixel is left between them) */
			var lx0 = 0, lx1 = 0, lc = 0, lhas = false, keep = false;
			function flush() {
				if (!lhas) return;
				if (lx1 - lx0 < 16) for (var x = lx0; x < lx1; x++) row[x] = lc;
				else row.fill(lc, lx0, lx1);
				lhas = false;
			}
			function rect(x0, x1, c) {
				var X0 = Math.round(Math.round(x0) * dpr), X1 = Math.min(pw, Math.max(X0 + 1, Math.round(Math.round(x1) * dpr)));
				if (keep && X1 - X0 >= 3 * dpr) X1 -= Math.round(dpr);
				if (!keep && lhas && c === lc && X0 <= lx1) { if (X1 > lx1) lx1 = X1; return; }
				flush();
				lx0 = X0; lx1 = X1; lc = c; lhas = true;
				v.drawnRects++;
			}
			var stripe = [rgba('#fff'), rgba('#f8f9fa')], top = Math.round(AXIS * dpr);
			px.fill(0, 0, Math.min(px.length, top * pw));
			lanes.forEach(function (l, li) {
				var y = AXIS + li * LANE, s = l.slices, j = firstAt(s, t0), run = false;
				var rx0 = 0, rx1 = 0, rdur = 0, rnm = 0, rj = 0, bg = stripe[li % 2];
				row.fill(bg);
				lhas = false;
				keep = apart(l);
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
							if (s[j + 1] > rdur) { rdur = s[j + 1]; rnm = s[j + 2]; rj = j; }
						} else {
							if (run) rect(rx0, rx1, pixelOf(l, rnm, rj));
							run = true; rx0 = x0; rx1 = x1; rdur = s[j + 1]; rnm = s[j + 2]; rj = j;
						}
						continue;
					}
					if (run) { rect(rx0, rx1, pixelOf(l, rnm, rj)); run = false; }
					rect(x0, x1, pixelOf(l, s[j + 2], j));
					if (x1 - x0 > 24) {
						/* cut to the characters that fit (monospace): a clip
						 * region per label cost more than the rectangles */
						var nm = nameOf(l, s[j + 2]), fit = Math.floor((Math.min(x1, w) - x0 - 4) / cw);
						if (fit >= 2) labels.push(nm.length > fit ? nm.slice(0, Math.max(1, fit - 1)) + '\u2026' : nm,
							x0 + 2, y + LANE / 2);
					}
				}
				if (run) rect(rx0, rx1, pixelOf(l, rnm, rj));
				flush();
				/* the stripe above and below the rectangles, the row between */
				var Y0 = Math.round(y * dpr), Y1 = Math.min(ph, Math.round((y + LANE) * dpr));
				var R0 = Math.round((y + 2) * dpr), R1 = Math.round((y + LANE - 2) * dpr);
				for (var yy = Y0; yy < Y1; yy++) {
					if (yy >= R0 && yy < R1) px.set(row, yy * pw);
					else px.fill(bg, yy * pw, (yy + 1) * pw);
				}
			});
			px.fill(0, Math.min(px.length, Math.round((AXIS + lanes.length * LANE) * dpr) * pw));
			T.push(performance.now());
			ctx.putImageData(img, 0, 0);
			T.push(performance.now());
			ctx.fillStyle = '#1d2330';
			for (var q = 0; q < labels.length; q += 3) ctx.fillText(labels[q], labels[q + 1], labels[q + 2]);
			lanes.forEach(function (l, li) {
				var y = AXIS + li * LANE;
				ctx.fillStyle = li % 2 ? '#f8f9fa' : '#fff';
				ctx.fillRect(0, y, LABEL, LANE);
				ctx.fillStyle = l.kind === 'gpu' ? '#2b8a3e' : l.kind === 'api' ? '#6741d9'
					: l.kind === 'step' ? '#364fc7' : l.kind === 'range' ? '#a06000' : '#1d2330';
				var nm = l.name, fit = Math.floor((LABEL - 8) / cw);
				ctx.fillText(nm.length > fit ? nm.slice(0, fit - 1) + '\u2026' : nm, 4, y + LANE / 2);
				v.drawnLanes++;
			});
			axis(ctx, w, h);
			flows(ctx, sc);
			T.push(performance.now());
			v.parts = T;
		}
		/* the time axis on top: round ticks in the unit of the view, lines
		 * down the lanes */
		function axis(ctx, w, h) {
			var tk = C.ticks(t0, t1, Math.max(2, Math.floor((w - LABEL) / 120)), 'ns');
			var fmt = C.tickText('ns', Math.max(Math.abs(t0), Math.abs(t1)), tk.step);
			ctx.fillStyle = '#fff';
			ctx.fillRect(0, 0, w, AXIS);
			ctx.strokeStyle = 'rgba(16,33,63,0.12)';
			ctx.beginPath();
			tk.ticks.forEach(function (t) {
				var x = Math.round(LABEL + (t - t0) * (w - LABEL) / (t1 - t0)) + 0.5;
				if (x < LABEL || x > w) return;
				ctx.moveTo(x, AXIS - 5); ctx.lineTo(x, h - 4);
			});
			ctx.stroke();
			ctx.fillStyle = '#5d6779';
			ctx.textAlign = 'center';
			tk.ticks.forEach(function (t) {
				var x = LABEL + (t - t0) * (w - LABEL) / (t1 - t0), txt = fmt(t), tw = ctx.measureText(txt).width;
				if (x < LABEL || x > w) return;
				ctx.fillText(txt, Math.min(w - tw / 2 - 2, Math.max(LABEL + tw / 2 + 2, x)), AXIS / 2 - 1);
			});
			ctx.textAlign = 'left';
			ctx.fillText(C.ns(t1 - t0) + ' shown', 4, AXIS / 2 - 1);
			v.ticks = tk.ticks.map(fmt);
		}
		/* lane position of a data lane index */
		var pos = [];
		lanes.forEach(function (l, i) { if (l.orig >= 0) pos[l.orig] = i; });
		/* The flows of the slice pointed at (else of the one clicked): thin
		 * arrows from each launch to its kernel. */
		function flows(ctx, sc) {
			var fl = tl.flows || [], f = hover || sel, nf = 0;
			v.drawnFlows = 0;
			if (!f) return;
			ctx.strokeStyle = '#5f3dc4';
			ctx.fillStyle = '#5f3dc4';
			ctx.lineWidth = 1;
			for (var k = 0; k + 3 < fl.length && nf < 300; k += 4) {
				var mine = (fl[k + 3] === f.lane && fl[k + 2] >= f.s && fl[k + 2] < f.e) ||
					(fl[k + 1] === f.lane && fl[k] >= f.s && fl[k] < f.e);
				if (!mine || pos[fl[k + 1]] == null || pos[fl[k + 3]] == null) continue;
				var ax = LABEL + (fl[k] - t0) * sc, gx = LABEL + (fl[k + 2] - t0) * sc;
				var ay = AXIS + pos[fl[k + 1]] * LANE + LANE / 2, gy = AXIS + pos[fl[k + 3]] * LANE + LANE / 2;
				if (Math.max(ax, gx) < LABEL) continue;
				ax = Math.max(LABEL, ax); gx = Math.max(LABEL, gx);
				var ang = Math.atan2(gy - ay, gx - ax);
				ctx.beginPath();
				ctx.moveTo(ax, ay);
				ctx.lineTo(gx, gy);
				ctx.stroke();
				ctx.beginPath();
				ctx.moveTo(gx, gy);
				ctx.lineTo(gx - 7 * Math.cos(ang - 0.4), gy - 7 * Math.sin(ang - 0.4));
				ctx.lineTo(gx - 7 * Math.cos(ang + 0.4), gy - 7 * Math.sin(ang + 0.4));
				ctx.fill();
				nf++;
			}
			v.drawnFlows = nf;
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
		/* the slice under the pointer: {lane (data index), s, e, name, l} */
		function sliceAt(ev) {
			var r = canvas.getBoundingClientRect(), li = Math.floor((ev.clientY - r.top - AXIS) / LANE);
			var l = lanes[li];
			if (!l || ev.clientX - r.left < LABEL) return null;
			var t = t0 + frac(ev) * (t1 - t0), s = l.slices, j = firstAt(s, t);
			/* within a pixel either side: thin slices can be pointed at */
			var slack = (t1 - t0) / Math.max(1, r.width - LABEL);
			for (; j + 2 < s.length && s[j] <= t + slack; j += 3)
				if (t < s[j] + s[j + 1] + slack)
					return { lane: l.orig, s: s[j], e: s[j] + s[j + 1], idx: s[j + 2], l: l };
			return null;
		}
		function describe(x) {
			var nm = (x.l.names || names)[x.idx] || ['?', '', 0];
			return x.l.name + ': ' + nm[0] + '  at ' + C.ns(x.s) + ' for ' + C.ns(x.e - x.s) +
				(nm[1] ? '  ' + nm[1].split('/').pop() + ':' + nm[2] : '');
		}
		canvas.addEventListener('wheel', function (ev) {
			ev.preventDefault(); zoom(ev.deltaY > 0 ? 1.25 : 0.8, frac(ev)); }, { passive: false });
		canvas.addEventListener('mousedown', function (ev) { drag = { x: ev.clientX, t0: t0, t1: t1, moved: 0 }; });
		window.addEventListener('mouseup', function () { setTimeout(function () { drag = null; }, 0); });
		canvas.addEventListener('mousemove', function (ev) {
			if (!drag) {
				var x = sliceAt(ev), was = hover;
				hover = x && (x.l.kind === 'gpu' || x.l.kind === 'api') ? x : null;
				canvas.title = x ? describe(x) : '';
				if ((was && was.s) !== (hover && hover.s) || (was && was.lane) !== (hover && hover.lane)) redraw();
				return;
			}
			var r = canvas.getBoundingClientRect(), dt = (ev.clientX - drag.x) / (r.width - LABEL) * (drag.t1 - drag.t0);
			drag.moved = Math.abs(ev.clientX - drag.x);
			var w0 = drag.t1 - drag.t0, n0 = Math.max(0, Math.min(tl.span_ns - w0, drag.t0 - dt));
			t0 = n0; t1 = n0 + w0; redraw();
		});
		canvas.addEventListener('mouseleave', function () { if (hover) { hover = null; redraw(); } });
		canvas.addEventListener('click', function (ev) {
			if (drag && drag.moved > 3) return;
			var x = sliceAt(ev);
			sel = x && (x.l.kind === 'gpu' || x.l.kind === 'api') ? x : null;
			if (x) {
				info.textContent = describe(x);
				v.selected = ((x.l.names || names)[x.idx] || ['?'])[0];
			}
			redraw();
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
		v.home = home;
		v.keys = function (k) { canvas.dispatchEvent(new KeyboardEvent('keydown', { key: k })); };
		v.drawNow = draw;
		/* point at the kernel of the first flow in view (self-tests) */
		v.hoverFlow = function () {
			var fl = tl.flows || [], k, l, s, j;
			for (k = 0; k + 3 < fl.length; k += 4) {
				if (fl[k + 2] < t0 || fl[k + 2] > t1) continue;
				l = lanes[pos[fl[k + 3]]];
				s = l.slices;
				for (j = firstAt(s, fl[k + 2]); j + 2 < s.length && s[j] <= fl[k + 2]; j += 3)
					if (fl[k + 2] < s[j] + s[j + 1]) {
						hover = { lane: l.orig, s: s[j], e: s[j] + s[j + 1], idx: s[j + 2], l: l };
						draw();
						return v.drawnFlows;
					}
			}
			return 0;
		};
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
				lanes.push({ kind: 'cpu', name: 'synthetic ' + k, slices: sl, orig: k });
			}
			tl.span_ns = span;
			tl.flows = [];
			hover = sel = null;
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
		fps: function () {
			var v = this, p = v.params || {};
			v.bench(+p.slices || 100000, +p.ms || 3000, function (r) { CBN.note('bench timeline.fps ok ' + r); });
			return 'started';
		},
		/*
		 * Opened on the activity, ticks at round values, lanes drawn; a
		 * kernel pointed at draws its flows; W zooms in, D pans right, 0
		 * shows the whole run.
		 */
		lanes: function () {
			var C = CBN, v = this, home = v.view();
			v.drawNow();
			C.check(v.ticks.length >= 2, 'fewer than two ticks');
			v.ticks.forEach(function (t) {
				C.check(/^-?\d+(\.\d{1,3})? (ns|us|ms|s)$/.test(t), 'tick "' + t + '" is not a round value');
			});
			var flows = v.hoverFlow();
			var span0 = home[1] - home[0];
			v.keys('w'); v.drawNow();
			var z = v.view();
			C.check(z[1] - z[0] < span0, 'W did not zoom in');
			v.keys('d'); v.drawNow();
			C.check(v.view()[0] > z[0] || z[1] >= span0, 'D did not pan');
			v.keys('0'); v.drawNow();
			var all = v.view();
			C.check(all[0] === 0 && all[1] - all[0] >= span0, '0 did not show the whole run');
			return 'lanes=' + v.drawnLanes + ' rects=' + v.drawnRects + ' flows=' + flows +
				' opened=' + C.ns(home[0]) + '..' + C.ns(home[1]) + ' (' + (v.home[2] || 'the run') + ')' +
				' ticks=' + v.ticks.join('|');
		}
	}
});
