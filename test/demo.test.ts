/**
 * `lookfirst demo`: offline, self-contained, and honest about what it shows.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runCli } from './helpers.js';

describe('lookfirst demo', () => {
  it('with --yes: the read passes, the transfer runs, the log verifies, and the edited line is named', () => {
    const r = runCli(['demo', '--yes']);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /Balance: 1250\.00 EUR/);
    assert.match(r.stdout, /"outcome":"executed"/);
    assert.match(r.stdout, /Balance: 1000\.00 EUR/);
    assert.match(r.stdout, /entries: intact/);
    const edited = /edited line was (\d+)/.exec(r.stdout)?.[1];
    assert.ok(edited);
    assert.match(r.stdout, new RegExp(`line ${edited}: entry edited`));
  });

  it('without a terminal: no means no, and the money stays', () => {
    const r = runCli(['demo']);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /\(no terminal to ask: denied\)/);
    assert.match(r.stdout, /result: NOT executed: no terminal to ask, so denied/);
    assert.doesNotMatch(r.stdout, /result: .*the person answered no/, 'nobody was asked: the demo says so');
    assert.match(r.stdout, /transfers 250\.00 EUR to/, 'the prompt shows the currency');
    assert.match(r.stdout, /"outcome":"denied"/);
    assert.doesNotMatch(r.stdout, /Balance: 1000\.00/);
  });
});
