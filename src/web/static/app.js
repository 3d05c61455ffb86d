// lookfirst approval page. Renders the state stream into text nodes only (never HTML): every string
// from the server has hidden and bidi characters escaped already, and textContent keeps markup inert.
// Nothing but a click (or key) on Approve approves: closing, reloading or losing the connection does not.
// After a gate restart with the same key the tab reconnects and shows the new gate's calls; with a new
// key it says to open the new address the gate printed, and stops retrying.
// After a decision from a card, focus moves to the next waiting card (else the list's heading), so the
// keyboard keeps its place, and that card takes no a/d key for a second (a double press must not decide
// a call the person has not read); a card that vanishes for another reason (timeout, another channel) sends
// focus to the heading, never to a card the person has not chosen.

(() => {
  const key = new URLSearchParams(location.search).get('k') || '';
  const meta = (name) => document.querySelector(`meta[name="${name}"]`).getAttribute('content');
  // Replaced by the stream's session event: a restarted gate (same key) has a new token.
  let csrf = meta('lookfirst-csrf');
  const identity = meta('lookfirst-identity');
  const NAME_KEY = 'lookfirst.approver';
  const $ = (id) => document.getElementById(id);
  let offset = 0;
  let state = { pending: [], history: [] };
  const cards = new Map();
  // Call ids decided from this tab while focus was in their card: focus goes on to the next card.
  const decidedHere = new Set();
  // A card focus was moved to (not chosen by the person) takes no a/d key for this long: a double press,
  // or a second press on a fast local gate, lands there before the person has read it.
  const LOOK_MS = 1000;
  const READBACK = {
    ok: 'read back: as expected',
    none: 'not read back (no read-back rule)',
    failed: 'read back: NOT as expected (tool locked)',
    unclear: 'read back: unclear (tool locked)',
  };

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'text') e.textContent = v;
      else if (k === 'class') e.className = v;
      else e.setAttribute(k, v);
    }
    for (const c of children) if (c) e.append(c);
    return e;
  }

  function savedName() {
    try {
      return localStorage.getItem(NAME_KEY) || '';
    } catch {
      return '';
    }
  }

  function renderWho() {
    const who = $('who');
    who.textContent = '';
    if (identity) {
      who.append(`Signed in as ${identity} (named by your proxy).`);
      return;
    }
    const input = el('input', { id: 'approver', maxlength: '64', autocomplete: 'name', value: savedName() });
    input.addEventListener('change', () => {
      try {
        localStorage.setItem(NAME_KEY, input.value.trim());
      } catch {}
    });
    who.append(el('label', { for: 'approver', text: 'Your name (goes into the audit log with each decision): ' }), input);
  }

  function approverName() {
    if (identity) return identity;
    const input = $('approver');
    return input ? input.value.trim() : '';
  }

  function left(ms) {
    const s = Math.max(0, Math.ceil(ms / 1000));
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
  }

  function tick() {
    const now = Date.now() + offset;
    for (const [, c] of cards) {
      const ms = c.data.deadlineMs - now;
      c.countdown.textContent = ms > 0 ? `${left(ms)} left to decide; then it is denied` : 'timed out: denied';
      c.node.classList.toggle('late', ms <= 30000);
    }
  }

  async function decide(c, decision) {
    if (c.busy) return;
    const name = approverName();
    if (!name) {
      c.msg.textContent = 'Type your name at the top first.';
      const input = $('approver');
      if (input) input.focus();
      return;
    }
    if (!identity) {
      try {
        localStorage.setItem(NAME_KEY, name);
      } catch {}
    }
    c.busy = true;
    if (c.node.contains(document.activeElement)) decidedHere.add(c.data.callId);
    for (const b of c.buttons) b.disabled = true;
    c.msg.textContent = 'sending…';
    try {
      const res = await fetch(`/decision?k=${encodeURIComponent(key)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-lookfirst-csrf': csrf },
        body: JSON.stringify({ call_id: c.data.callId, args_sha256: c.data.argsSha256, decision, comment: c.comment.value, approver: name }),
        credentials: 'same-origin',
      });
      const body = await res.json().catch(() => ({}));
      c.msg.textContent = res.ok ? `${decision === 'approve' ? 'Approved' : 'Denied'}.` : `Not taken: ${body.error || res.status}`;
      if (!res.ok) release(c);
    } catch (err) {
      c.msg.textContent = `Not sent (${err.message}); nothing was decided.`;
      release(c);
    }
  }

  function release(c) {
    c.busy = false;
    decidedHere.delete(c.data.callId);
    for (const b of c.buttons) b.disabled = false;
  }

  function card(p) {
    const unlock = p.purpose === 'unlock';
    const approve = el('button', { class: 'approve', type: 'button', text: unlock ? 'Unlock' : 'Approve' });
    const deny = el('button', { class: 'deny', type: 'button', text: 'Deny' });
    const comment = el('textarea', { rows: '1', maxlength: '500', 'aria-label': 'Comment (optional)', placeholder: 'Comment (optional)' });
    const countdown = el('p', { class: 'countdown', 'aria-live': 'off' });
    const msg = el('p', { class: 'msg', role: 'status' });
    const warnings = p.warnings.length ? el('ul', { class: 'warnings' }, ...p.warnings.map((w) => el('li', { text: `⚠ ${w}` }))) : null;
    const node = el(
      'article',
      { class: `card risk-${p.risk}`, tabindex: '0', 'data-call-id': p.callId, 'aria-label': `${unlock ? 'Unlock' : 'Call'} ${p.tool}` },
      el(
        'h3',
        {},
        el('span', { class: 'tool', text: unlock ? `UNLOCK ${p.tool}` : p.tool }),
        el('span', { class: 'upstream', text: ` on ${p.upstream}` }),
        el('span', { class: `risk risk-${p.risk}`, text: `${p.risk} risk` }),
      ),
      p.riskReason ? el('p', { class: 'risk-reason', text: `${p.risk} risk: ${p.riskReason}` }) : null,
      el('p', { class: 'summary', text: p.summary }),
      warnings,
      p.diff
        ? el(
            'pre',
            { class: 'diff', tabindex: '0', 'aria-label': 'What the file would become (unified diff)' },
            ...p.diff.split('\n').map((line) =>
              el('span', {
                class:
                  line.startsWith('+') && !line.startsWith('+++')
                    ? 'add'
                    : line.startsWith('-') && !line.startsWith('---')
                      ? 'del'
                      : line.startsWith('@@')
                        ? 'hunk'
                        : 'ctx',
                text: `${line}\n`,
              }),
            ),
          )
        : null,
      el('pre', { class: 'args', tabindex: '0', 'aria-label': 'Arguments, in full' }, document.createTextNode(p.args)),
      el('p', { class: 'meta', text: `asked by ${p.client} · shown on ${p.channels.join(', ')} · call ${p.callId} · sha256 ${p.argsSha256.slice(0, 16)}…` }),
      countdown,
      el('div', { class: 'actions' }, comment, approve, deny),
      msg,
    );
    const c = { data: p, node, countdown, msg, comment, buttons: [approve, deny], keysFrom: 0 };
    approve.addEventListener('click', () => decide(c, 'approve'));
    deny.addEventListener('click', () => decide(c, 'deny'));
    node.addEventListener('keydown', (e) => {
      if (e.target !== node) return;
      // A held key repeats: only a fresh press decides, so it cannot run on into the next card.
      if ((e.key === 'a' || e.key === 'd') && e.repeat) return;
      if ((e.key === 'a' || e.key === 'd') && performance.now() < c.keysFrom) {
        c.msg.textContent = 'This call was just moved to: read it, then press the key again.';
        return;
      }
      if (e.key === 'a') decide(c, 'approve');
      else if (e.key === 'd') decide(c, 'deny');
      else if (e.key === 'j' || e.key === 'k') {
        const all = [...document.querySelectorAll('.card')];
        const next = all[all.indexOf(node) + (e.key === 'j' ? 1 : -1)];
        if (next) next.focus();
      }
    });
    return c;
  }

  // Where focus goes when the card holding it leaves: the next remaining card after a decision made
  // here, else the list's heading (focusable by script only).
  function moveFocusFrom(c, ids) {
    let target = null;
    if (decidedHere.has(c.data.callId)) {
      const all = [...document.querySelectorAll('.card')];
      const i = all.indexOf(c.node);
      const stays = (n) => ids.has(n.dataset.callId);
      target = all.slice(i + 1).find(stays) || all.slice(0, i).reverse().find(stays) || null;
      const next = target && cards.get(target.dataset.callId);
      if (next) next.keysFrom = performance.now() + LOOK_MS;
    }
    (target || $('pending-h')).focus();
  }

  function renderPending() {
    const list = $('pending');
    const ids = new Set(state.pending.map((p) => p.callId));
    for (const [id, c] of cards) {
      if (!ids.has(id)) {
        if (c.node.contains(document.activeElement)) moveFocusFrom(c, ids);
        decidedHere.delete(id);
        c.node.remove();
        cards.delete(id);
      }
    }
    for (const p of state.pending) {
      if (cards.has(p.callId)) continue;
      const c = card(p);
      cards.set(p.callId, c);
      list.append(c.node);
    }
    const n = state.pending.length;
    $('empty').hidden = n > 0;
    $('count').textContent = n ? `· ${n} waiting` : '';
    document.title = n ? `(${n}) lookfirst: waiting for you` : 'lookfirst';
    tick();
  }

  function renderHistory() {
    const list = $('history');
    list.textContent = '';
    for (const h of state.history) {
      const when = new Date(h.atMs).toLocaleTimeString();
      const parts = [`${when} · ${h.decision}`];
      if (h.actor) parts.push(`by ${h.actor}`);
      if (h.outcome) parts.push(`→ ${h.outcome}`);
      if (h.readback) parts.push(READBACK[h.readback] || `read-back ${h.readback}`);
      list.append(
        el(
          'li',
          { class: `decision-${h.decision.replace(/\s+/g, '-')}` },
          el('span', { class: 'what', text: parts.join(' ') }),
          el('span', { class: 'tool', text: ` ${h.purpose === 'unlock' ? 'UNLOCK ' : h.purpose === 'definition' ? 'DEFINITION ' : ''}${h.summary}` }),
          h.comment ? el('q', { text: h.comment }) : null,
        ),
      );
    }
  }

  // Losing the gate. While it does not answer, the browser retries the stream by itself; a gate that
  // comes back on this port with the same key (a key file) is live again at once, with its own calls.
  // A refused key (403) means the gate restarted with a new key: the tab says to open the new address
  // and stops. No answer for giveUpMs: the tab says the gate stopped or moved, and keeps checking
  // slowly, so a gate that returns with the same key still comes back without a reload.
  const [retryMs, giveUpMs] = (meta('lookfirst-reconnect') || '2000,60000').split(',').map(Number);
  const slowRetryMs = retryMs * 5;
  const WHERE =
    'The gate prints its page address on its standard error (the line "approval page at http://…"), and opens it in your browser when a call waits.';
  let lostSince = 0;
  let ended = false;
  let gone = false;

  function showLost(message, className) {
    const status = $('status');
    status.textContent = message;
    status.className = className;
    // Calls held by the old gate are no longer waiting: nothing on this tab can decide them.
    state = { pending: [], history: state.history };
    renderPending();
  }

  async function probe(es) {
    es.close();
    let res;
    try {
      res = await fetch(`/state.json?k=${encodeURIComponent(key)}`, { cache: 'no-store', credentials: 'same-origin' });
    } catch {
      res = undefined;
    }
    if (res?.status === 403) {
      ended = true;
      showLost(
        `The gate restarted with a new access key: this tab belongs to the gate that stopped, and nothing can be approved from it. Open the new address. ${WHERE}`,
        'down ended',
      );
      return;
    }
    if (res?.ok) {
      // The key is good (the gate is back, or the stream was refused for another reason, e.g. too many tabs).
      setTimeout(connect, gone ? 0 : retryMs);
      return;
    }
    if (!gone && Date.now() - lostSince >= giveUpMs) {
      gone = true;
      showLost(
        `The gate is not answering at this address: it stopped, or it restarted on another port. This tab keeps checking and comes back by itself if the gate returns here with the same key. Otherwise open its new address. ${WHERE}`,
        'down gone',
      );
    }
    setTimeout(() => probe(es), gone ? slowRetryMs : retryMs);
  }

  function connect() {
    if (ended) return;
    const status = $('status');
    const es = new EventSource(`/events?k=${encodeURIComponent(key)}`);
    es.addEventListener('open', () => {
      lostSince = 0;
      gone = false;
      status.textContent = 'live: new calls appear by themselves';
      status.className = 'ok';
    });
    es.addEventListener('error', () => {
      // Still gone (the gate answered a check, then failed the stream): back to slow checking.
      if (gone) return void probe(es);
      if (!lostSince) lostSince = Date.now();
      status.textContent = 'connection to the gate lost; retrying… (nothing is approved while it is down)';
      status.className = 'down';
      // CLOSED: the gate answered, but not with the stream (a refused key). CONNECTING: no answer; the
      // browser retries by itself until giveUpMs, then the tab takes over the checking.
      if (es.readyState === EventSource.CLOSED || Date.now() - lostSince >= giveUpMs) void probe(es);
    });
    es.addEventListener('session', (e) => {
      csrf = JSON.parse(e.data).csrf;
    });
    es.addEventListener('state', (e) => {
      state = JSON.parse(e.data);
      offset = state.nowMs - Date.now();
      renderPending();
      renderHistory();
    });
  }

  // "Pair a phone": a new pairing's code and a QR code of its address. The QR SVG comes from this page's
  // own POST /pair and is shown as an image from a Blob URL (CSP img-src blob:), never as markup.
  let qrUrl = '';
  function renderPairButton() {
    if (meta('lookfirst-pairing') !== 'on') return;
    const area = $('pair-area');
    const button = el('button', { id: 'pair-phone', class: 'pair', type: 'button', text: 'Pair a phone' });
    const panel = el('div', { id: 'pair-panel', hidden: '' });
    button.addEventListener('click', async () => {
      button.disabled = true;
      try {
        const res = await fetch(`/pair?k=${encodeURIComponent(key)}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-lookfirst-csrf': csrf },
          body: '{}',
          credentials: 'same-origin',
        });
        const body = await res.json().catch(() => ({}));
        panel.textContent = '';
        panel.hidden = false;
        if (!res.ok) {
          panel.append(el('p', { class: 'msg', text: `No pairing: ${body.error || res.status}` }));
          return;
        }
        if (qrUrl) URL.revokeObjectURL(qrUrl);
        qrUrl = URL.createObjectURL(new Blob([body.qr_svg], { type: 'image/svg+xml' }));
        const until = new Date(body.expires_at).toLocaleTimeString();
        const close = el('button', { class: 'deny', type: 'button', text: 'Close' });
        close.addEventListener('click', () => {
          panel.hidden = true;
          panel.textContent = '';
        });
        panel.append(
          el('p', { text: 'On the phone, scan this code (or open the address below), then type the 6-digit code there.' }),
          el('img', { id: 'pair-qr', src: qrUrl, alt: `QR code of ${body.url}`, width: '220', height: '220' }),
          el('p', { id: 'pair-code', class: 'pair-code', text: body.code }),
          el('p', { id: 'pair-url', class: 'meta', text: body.url }),
          el('p', { class: 'hint', text: `Valid until ${until}, once; locked after 5 wrong tries.` }),
          close,
        );
      } catch (err) {
        panel.hidden = false;
        panel.textContent = `Not sent (${err.message}).`;
      } finally {
        button.disabled = false;
      }
    });
    area.append(button, panel);
  }

  renderWho();
  renderPairButton();
  connect();
  setInterval(tick, 1000);
})();
