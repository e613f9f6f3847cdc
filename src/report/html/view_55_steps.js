/*
 * view_55_steps.js — #steps: the step statistics, the table of steps (CPU,
 * GPU busy, sync per step) and the slowest steps, when the run had steps.
 */
'use strict';
CBN.view({
	id: 'steps', title: 'Steps',
	has: function (d) { return d.report && d.report.steps; },
	render: function (el, d) {
		var C = CBN, s = d.report.steps;
		el.appendChild(C.el('h2', {}, 'Steps' + (s.what ? ': ' + s.what : '')));
		el.appendChild(C.cards(s));
		el.appendChild(C.recos(s.recommendations));
		C.tables(el, s, ['recommendations']);
	}
});
