/*
 * lib_check.js — the layout check every view runs when asked
 * (#VIEW&selftest=layout; tests/html/shots.py asks for it at 1280 and 1920
 * px): nothing wider than the page or its container, the numbers of every
 * table in view without scrolling it sideways, no canvas with a blank band,
 * every chart drawn, and no text a person should not have to read: a raw
 * float, a bare nanosecond count, a JSON key as a label.
 */
'use strict';
(function (C) {
	function visible(e) { return e.offsetParent !== null || e.tagName === 'svg'; }
	/* elements that may hold more than they show: their own box is checked */
	function clipped(e, sec) {
		for (var p = e.parentElement; p && p !== sec; p = p.parentElement) {
			var o = getComputedStyle(p);
			if (o.overflowX !== 'visible' || o.textOverflow === 'ellipsis') return true;
		}
		return false;
	}
	/* a canvas's horizontal bands: each must hold a pixel unlike its first */
	function blankBands(cv) {
		var ctx = cv.getContext('2d'), h = cv.height, w = cv.width, band, bands = 0, blank = [];
		if (!ctx || h < 8 || w < 8) return { bands: 0, blank: [] };
		var data = ctx.getImageData(0, 0, w, h).data, dpr = window.devicePixelRatio || 1;
		band = Math.max(Math.round(17 * dpr), Math.round(h / 12));
		/* a last band of a few pixels (the gap under the last row) is no region */
		for (var y0 = 0; y0 + 4 * dpr < h; y0 += band, bands++) {
			var y1 = Math.min(h, y0 + band), ref = (y0 * w) * 4, diff = false;
			for (var y = y0; y < y1 && !diff; y += 2)
				for (var x = 0; x < w; x += 2) {
					var i = (y * w + x) * 4;
					if (data[i] !== data[ref] || data[i + 1] !== data[ref + 1] || data[i + 2] !== data[ref + 2] ||
					    data[i + 3] !== data[ref + 3]) { diff = true; break; }
				}
			if (!diff) blank.push(Math.round(y0 / dpr) + '-' + Math.round(y1 / dpr));
		}
		return { bands: bands, blank: blank };
	}
	var RAW_FLOAT = /(^|[^\w.])\d+\.\d{4,}(?![\w.])/, RAW_INT = /(^|[^\w.,x#])\d{7,}(?![\w.,])/;
	var KEY = /\b[a-z]+_[a-z_]+\b/;
	C.common.layout = function (sec) {
		var page = document.documentElement, out = [], bad = [], n = 0, cells = 0, bands = 0;
		var sr = sec.getBoundingClientRect();
		if (page.scrollWidth > page.clientWidth + 1)
			bad.push('the page scrolls sideways: ' + page.scrollWidth + ' px for ' + page.clientWidth);
		/* nothing past its container (what a scroll box or an ellipsis cuts
		 * is that box's business: its own box is checked) */
		Array.prototype.forEach.call(sec.querySelectorAll('*'), function (e) {
			if (!visible(e) || clipped(e, sec)) return;
			var r = e.getBoundingClientRect();
			if (!r.width && !r.height) return;
			n++;
			if (r.right > sr.right + 1 || r.left < sr.left - 1)
				bad.push(e.tagName.toLowerCase() + (e.className && typeof e.className === 'string'
					? '.' + e.className.split(' ')[0] : '') + ' spans ' + Math.round(r.left) + '..' +
					Math.round(r.right) + ' past ' + Math.round(sr.left) + '..' + Math.round(sr.right));
		});
		/* the numbers of each table's first rows in view: no sideways
		 * scrolling to read them */
		Array.prototype.forEach.call(sec.querySelectorAll('.tbl-box'), function (box) {
			if (!visible(box)) return;
			var br = box.getBoundingClientRect();
			Array.prototype.slice.call(box.querySelectorAll('tbody tr'), 0, 5).forEach(function (tr) {
				Array.prototype.forEach.call(tr.querySelectorAll('td.n'), function (td) {
					var r = td.getBoundingClientRect();
					cells++;
					if (r.right > br.right + 1 || r.left < br.left - 1)
						bad.push('number "' + td.textContent + '" at ' + Math.round(r.left) + '..' +
							Math.round(r.right) + ' outside its table ' + Math.round(br.left) + '..' +
							Math.round(br.right));
				});
			});
		});
		Array.prototype.forEach.call(sec.querySelectorAll('canvas'), function (cv) {
			if (!visible(cv)) return;
			var b = blankBands(cv);
			bands += b.bands;
			if (b.blank.length) bad.push('canvas ' + (cv.parentElement.id || cv.parentElement.className) +
				' blank at y ' + b.blank.slice(0, 4).join(', '));
		});
		Array.prototype.forEach.call(sec.querySelectorAll('.chart svg'), function (s) {
			if (!s.querySelector('rect, polyline')) bad.push('a chart with nothing drawn');
		});
		/* what a person reads: no raw float, bare ns count or JSON key (not
		 * in source code, commands, names or the gate's own table) */
		var walk = document.createTreeWalker(sec, NodeFilter.SHOW_TEXT), t, texts = 0;
		while ((t = walk.nextNode())) {
			var p = t.parentElement, s = t.nodeValue;
			if (!s.trim() || !visible(p) || p.closest('table.src, code, pre, td.name, .name, .src-pick, ' +
				'.flame-info, .tl-info, .reco, .warn, .verdict, option, .ev')) continue;
			texts++;
			if (RAW_FLOAT.test(s)) bad.push('a raw float: "' + s.trim().slice(0, 60) + '"');
			else if (RAW_INT.test(s) && !/(process|thread|pid|tid|rank|step) \d+/.test(s))
				bad.push('a bare count: "' + s.trim().slice(0, 60) + '"');
			else if (p.closest('th, .card span, .legend, label, button') && KEY.test(s))
				bad.push('a key as a label: "' + s.trim().slice(0, 60) + '"');
		}
		if (bad.length) throw new Error(bad.length + ' problems: ' + bad.slice(0, 6).join('; '));
		out.push('elements=' + n, 'numbers=' + cells, 'canvas_bands=' + bands, 'texts=' + texts,
			'width=' + page.clientWidth);
		return out.join(' ');
	};
})(CBN);
