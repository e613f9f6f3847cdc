/*
 * view_25_source.js — #source&file=F&line=N: the program's own hot source
 * files read at report time, with per-line self and total time as heat, the
 * line asked for outlined; links open the editor.  Only the hottest files
 * are in the page; when none could be read the view says why in plain
 * words (no debug info, and what gives it; the sources moved) instead.
 */
'use strict';
CBN.view({
	id: 'source', title: 'Source',
	render: function (el, d, params) {
		var C = CBN, srcs = (d.html && d.html.sources) || [], line = +params.line || 0;
		var read = srcs.filter(function (s) { return s.lines; }), unread = srcs.filter(function (s) {
			return !s.lines; });
		var cur = C.source(params.file) || read[0];
		if (!cur) {
			el.appendChild(C.el('h2', {}, 'Source'));
			noSource(el, d, unread);
			return;
		}
		var pick = C.el('div', { cls: 'tools src-pick' }, C.el('span', { cls: 'muted' }, 'Hot files:'));
		read.forEach(function (s) {
			pick.appendChild(C.el('a', { href: C.href('source', { file: s.file }), title: s.file,
				cls: s === cur ? 'on' : '' }, s.file.split('/').pop()));
		});
		el.appendChild(pick);
		if (unread.length)
			el.appendChild(C.el('p', { cls: 'muted' }, 'Not found where the build left them: ' +
				unread.map(function (s) { return s.file; }).join(', ') + '. If the sources moved, give ' +
				'--source-root DIR with their new place.'));
		var heat = {}, max = 1, i, h = cur.heat || [], hottest = 0;
		for (i = 0; i + 2 < h.length; i += 3) {
			heat[h[i]] = [h[i + 1], h[i + 2]];
			if (h[i + 2] > max) { max = h[i + 2]; hottest = h[i]; }
		}
		/* no line asked for: the hottest, in view */
		if (!line) line = hottest;
		el.appendChild(C.el('h2', { title: cur.file }, cur.file.split('/').pop()));
		el.appendChild(C.el('p', { cls: 'muted' }, 'read from ' + cur.path + (cur.cut ? ' (cut)' : '') +
			' \u2014 ', C.el('a', { href: 'vscode://file' + cur.path + (line ? ':' + line : '') },
			'open in the editor'), ' \u2014 self: time in the line itself; total: with what it called'));
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
			C.el('tr', {}, C.el('th', {}, 'Self'), C.el('th', {}, 'Total'), C.el('th', {}, 'Line'),
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
			var files = d.html.sources.filter(function (s) { return s.lines; });
			return 'lines=' + rows.length + ' hot=' + hot + ' file=' + files[0].file.split('/').pop() +
				' files=' + files.map(function (s) { return s.file.split('/').pop(); }).join(',');
		}
	}
});

/* Why no source can be shown, and what would show it. */
function noSource(el, d, unread) {
	var C = CBN, r = d.report, env = r.environment || {}, said = 0;
	var dbg = (r.warnings || []).filter(function (w) { return /^no debug info/.test(w); })[0];
	if (env.program_debuginfo === false) {
		el.appendChild(C.el('p', { cls: 'warn' }, 'The program has no debug info: it was built without ' +
			'-g, so no time can be given to its source lines. Rebuild it with -g (optimization can ' +
			'stay: -O2 -g) and profile it again.'));
		said++;
	}
	if (dbg) {
		el.appendChild(C.el('p', { cls: 'warn' }, dbg.charAt(0).toUpperCase() + dbg.slice(1) + '.'));
		said++;
	}
	if (unread.length) {
		el.appendChild(C.el('p', {}, 'The hottest source files were not found where the build left ' +
			'them: ' + unread.map(function (s) { return s.file + ' (' + s.error + ')'; }).join(', ') +
			'. If the sources moved, give --source-root DIR with their new place.'));
		said++;
	}
	if (!said)
		el.appendChild(C.el('p', {}, 'No source line of the program holds time: the samples fell in ' +
			'libraries (see the CPU view for which) or the run was too short to sample.'));
}
