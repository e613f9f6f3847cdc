/*
 * view_70_distributed.js — #distributed: ranks of a distributed run.  The
 * report has no such section yet (a later issue adds it); until then the tab
 * stays hidden and the fragment says so.
 */
'use strict';
CBN.view({
	id: 'distributed', title: 'Distributed',
	empty: 'This run has no distributed data (no ranks were recorded).',
	has: function (d) { return d.report && d.report.distributed; },
	render: function (el, d) {
		var C = CBN, x = d.report.distributed;
		el.appendChild(C.el('h2', {}, 'Distributed'));
		el.appendChild(C.cards(x));
		C.tables(el, x);
	}
});
