/*
 * view_25_source.js — #source&file=F&line=N: a source file read at report
 * time with per-line self and total time as heat, the line asked for
 * outlined; links open the editor.  Only the hottest files are in the page.
 */
'use strict';
CBN.view({
	id: 'source', title: 'Source',
	has: function (d) { return d.html && d.html.sources && d.html.sources.length; },
	render: function (el, d, params) {
		var C = CBN, srcs = d.html.sources, cur = C.source(params.file) || srcs.filter(function (s) {
			return s.lines; })[0], line = +params.line || 0;
		var pick = C.el('div', { cls: 'tools' });
		srcs.forEach(function (s) {
			pick.appendChild(s.lines ? C.el('a', { href: C.href('source', { file: s.file }) },
				s.file.split('/').pop()) : C.el('span', { cls: 'muted', title: s.error || '' },
				s.file.split('/').pop() + ' (unreadable: ' + (s.error || '?') + ')'));
		});
		el.appendChild(pick);
		if (!cur) {
			el.appendChild(C.el('p', {}, 'None of the hottest files could be read when the report ' +
				'was written; give --source-root DIR when the sources moved.'));
			return;
		}
		var heat = {}, max = 1, i, h = cur.heat || [];
		for (i = 0; i + 2 < h.length; i += 3) {
			heat[h[i]] = [h[i + 1], h[i + 2]];
			if (h[i + 2] > max) max = h[i + 2];
		}
		el.appendChild(C.el('h2', {}, cur.file));
		el.appendChild(C.el('p', { cls: 'muted' }, 'read from ' + cur.path + (cur.cut ? ' (cut)' : '') +
			' \u2014 ', C.el('a', { href: 'vscode://file' + cur.path + (line ? ':' + line : '') },
			'open in the editor')));
		var tb = C.el('tbody'), here = null;
		cur.lines.forEach(function (t, k) {
			var n = k + 1, hv = heat[n], tr = C.el('tr', { id: 'L' + n },
				C.el('td', { cls: 'n' }, hv && hv[0] ? C.ns(hv[0]) : ''),
				C.el('td', { cls: 'n' }, hv && hv[1] ? C.ns(hv[1]) : ''),
				C.el('td', { cls: 'n' }, n), C.el('td', {}, t));
			if (hv) tr.style.background = 'rgba(217,72,15,' + (0.08 + 0.5 * hv[1] / max).toFixed(3) + ')';
			if (n === line) { tr.className = 'here'; here = tr; }
			tb.appendChild(tr);
		});
		var sc = C.el('div', { cls: 'scroll' }, C.el('table', { cls: 'src' }, C.el('thead', {},
			C.el('tr', {}, C.el('th', {}, 'self'), C.el('th', {}, 'total'), C.el('th', {}, 'line'),
			C.el('th', {}, ''))), tb));
		el.appendChild(sc);
		if (here) setTimeout(function () { sc.scrollTop = here.offsetTop - 80; }, 0);
	},
	selftests: {
		/* the hottest file shown, with heat on some lines, and the editor link */
		heat: function (sec, d) {
			var rows = sec.querySelectorAll('table.src tbody tr'), hot = 0, i;
			for (i = 0; i < rows.length; i++) if (rows[i].style.background) hot++;
			CBN.check(rows.length > 0, 'no source lines');
			CBN.check(hot > 0, 'no line has heat');
			CBN.check(sec.querySelector('a[href^="vscode://file/"]'), 'no editor link');
			return 'lines=' + rows.length + ' hot=' + hot + ' file=' +
				d.html.sources[0].file.split('/').pop();
		}
	}
});
