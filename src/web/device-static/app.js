// lookfirst device page (docs/device-api.md). Pairs this phone with the gate (a 6-digit code, a key made
// here with WebCrypto that never leaves this phone again), then shows the cards waiting for this phone's
// user and answers them with requests signed by that key. Security posture as on the approval page: text
// nodes only (textContent, never HTML), no inline script (CSP), nothing approves but a tap on Approve (or
// the recorded words of the person, transcribed by the gate). A refusal is shown with the check that failed.

(() => {
  const STORE = 'lookfirst.device';
  const POLL_MS = 2000;
  // A second yes must be a second act: "Confirm again" appears where "Approve" was, so for this long it
  // takes no tap (a double tap on Approve would otherwise give both yeses at once).
  const SECOND_TAP_GUARD_MS = 1500;
  const $ = (id) => document.getElementById(id);
  const enc = new TextEncoder();
  let device = load();
  let cryptoKey;
  let offset = 0; // gate time − phone time (ms), from the x-lookfirst-now header
  let set;
  let setKey = '';
  let pollTimer;
  let busy = false;
  let polling = false;
  let pollAgain = false;
  // Whether the gate takes spoken answers (GET /device/api/me says so): without it "Hold to speak" is hidden.
  let voiceOn = false;
  const shown = new Map();

  function load() {
    try {
      const v = JSON.parse(localStorage.getItem(STORE) || 'null');
      return v && typeof v.id === 'string' && typeof v.key === 'string' ? v : undefined;
    } catch {
      return undefined;
    }
  }

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

  function b64url(bytes) {
    let s = '';
    for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b);
    return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }
  function unb64url(text) {
    const s = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
    return Uint8Array.from(s, (c) => c.charCodeAt(0));
  }
  function hex(bytes) {
    return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('');
  }

  function status(text, cls) {
    const s = $('status');
    s.textContent = text;
    s.className = cls || '';
  }

  function view(name) {
    for (const id of ['pairing', 'device', 'revoked']) $(id).hidden = id !== name;
  }

  // ---- signing: "LOOKFIRST-DEVICE-1\n" + METHOD + "\n" + path?query + "\n" + timestamp + "\n" + hex(sha256(body))
  async function hmacKey() {
    if (!cryptoKey) cryptoKey = await crypto.subtle.importKey('raw', unb64url(device.key), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    return cryptoKey;
  }

  async function signed(method, target, body, type) {
    const bytes = body === undefined ? new Uint8Array(0) : typeof body === 'string' ? enc.encode(body) : new Uint8Array(body);
    const ts = String(Math.round(Date.now() + offset));
    const bodyHash = hex(await crypto.subtle.digest('SHA-256', bytes));
    const text = `LOOKFIRST-DEVICE-1\n${method}\n${target}\n${ts}\n${bodyHash}`;
    const sig = b64url(await crypto.subtle.sign('HMAC', await hmacKey(), enc.encode(text)));
    const headers = { 'x-lookfirst-device': device.id, 'x-lookfirst-timestamp': ts, 'x-lookfirst-signature': sig };
    if (type) headers['content-type'] = type;
    const res = await fetch(target, { method, headers, body: method === 'GET' ? undefined : bytes, cache: 'no-store', credentials: 'omit' });
    const now = Number(res.headers.get('x-lookfirst-now'));
    if (now > 0) offset = now - Date.now();
    const json = await res.json().catch(() => ({}));
    if (res.status === 403 && /revoked/.test(json.error || '')) revoked(json.error, 'This phone was revoked');
    // The gate no longer knows this device (its state was reset): the key is useless; offer to pair again.
    else if (res.status === 401 && /no device is paired/.test(json.error || '')) revoked(json.error, 'This phone is no longer paired');
    return { status: res.status, body: json };
  }

  // ---- pairing
  async function pair(event) {
    event.preventDefault();
    const code = $('pair-code').value.replace(/\s+/g, '');
    const name = $('pair-name').value.trim();
    const msg = $('pair-msg');
    if (!/^\d{6}$/.test(code)) {
      msg.textContent = 'The code has 6 digits: type it as the gate shows it.';
      $('pair-code').focus();
      return;
    }
    if (!name) {
      msg.textContent = 'Give this phone a name: it goes into the audit log with each decision.';
      return;
    }
    const key = crypto.getRandomValues(new Uint8Array(32));
    const pairingId = new URLSearchParams(location.hash.slice(1)).get('pair') || undefined;
    $('pair-submit').disabled = true;
    msg.textContent = 'pairing…';
    try {
      const res = await fetch('/device/api/pair', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ pairing_id: pairingId, code, key: b64url(key), name }),
        cache: 'no-store',
        credentials: 'omit',
      });
      const body = await res.json().catch(() => ({}));
      if (res.status !== 201) {
        const why = String(body.error || `status ${res.status}`).replace(/^pairing refused: /, '');
        // A locked pairing has no tries left to count: "locked" says it.
        const left = typeof body.tries_left === 'number' && body.tries_left > 0 && !/left|locked/.test(why) ? ` (${body.tries_left} tries left)` : '';
        msg.textContent = `Not paired: ${why}${left}`;
        return;
      }
      device = { id: body.device_id, user: body.user, name, key: b64url(key) };
      cryptoKey = undefined; // a phone paired again signs with its new key from here on
      localStorage.setItem(STORE, JSON.stringify(device));
      history.replaceState(null, '', '/device/');
      msg.textContent = '';
      start();
    } catch (err) {
      msg.textContent = `Not sent (${err.message}): is the gate running at this address?`;
    } finally {
      $('pair-submit').disabled = false;
    }
  }

  function revoked(why, heading) {
    clearTimeout(pollTimer);
    pollTimer = undefined;
    $('revoked-h').textContent = heading;
    if (why) $('revoked-why').textContent = `The gate refused this phone: ${why}. Nothing can be approved from it.`;
    status('revoked', 'down');
    view('revoked');
  }

  function forget() {
    localStorage.removeItem(STORE);
    device = undefined;
    cryptoKey = undefined;
    showPairing();
  }

  function showPairing() {
    view('pairing');
    // A new pairing link on a phone that already holds a key: say what pairing again does, and offer to keep it.
    const again = Boolean(device);
    $('pair-again').hidden = !again;
    if (again) $('pair-note').textContent = `This phone is paired as ${device.name} (${device.id}) for user ${device.user}; pairing again replaces it.`;
    status(new URLSearchParams(location.hash.slice(1)).get('pair') ? 'ready to pair' : 'not paired', '');
    $('pair-code').focus();
  }

  function keepPairing() {
    history.replaceState(null, '', '/device/');
    $('pair-again').hidden = true;
    start();
  }

  // The words the gate takes for the cards shown: "yes" means the last card, a number picks one.
  function voiceHint(n) {
    return n > 1 ? 'Say a number ("two"), "yes" for the last, or "no".' : 'Say "yes" or "no".';
  }

  // ---- cards
  function ms(v) {
    return typeof v === 'number' ? v : Date.parse(v);
  }
  function left(msLeft) {
    const s = Math.max(0, Math.ceil(msLeft / 1000));
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
  }

  function diffBlock(diff) {
    return el(
      'pre',
      { class: 'diff', tabindex: '0', 'aria-label': 'What the file would become (unified diff)' },
      ...diff
        .replace(/\n$/, '')
        .split('\n')
        .map((line) =>
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
    );
  }

  function card(c) {
    const second = c.stage === 'second';
    const approve = el('button', { class: 'approve', type: 'button', text: second ? 'Confirm again' : 'Approve' });
    const deny = el('button', { class: 'deny', type: 'button', text: 'Deny' });
    const countdown = el('p', { class: 'countdown' });
    const msg = el('p', { class: 'msg', role: 'status' });
    const looks = Array.isArray(c.lookalikes) && c.lookalikes.length;
    const node = el(
      'li',
      { class: `card risk-${c.risk}${second ? ' second' : ''}`, 'data-call-id': c.call_id, 'data-position': String(c.position) },
      el(
        'div',
        { class: 'head' },
        el('span', { class: 'position', 'aria-label': `card ${c.position}`, text: String(c.position) }),
        el('span', { class: 'tool', text: c.tool }),
        el('span', { class: `risk risk-${c.risk}`, text: `${c.risk} risk` }),
      ),
      second ? el('p', { class: 'second-note', text: 'High risk: this needs a second yes. Read it once more, then confirm again.' }) : null,
      c.risk_reason ? el('p', { class: 'risk-reason', text: `${c.risk} risk: ${c.risk_reason}` }) : null,
      el('p', { class: 'summary', text: c.summary }),
      // The full arguments, as the desktop page shows them: the yes binds these, not the summary.
      c.arguments ? el('pre', { class: 'args', tabindex: '0', 'aria-label': 'Arguments, in full', text: c.arguments }) : null,
      looks
        ? el(
            'ul',
            { class: 'warnings' },
            ...c.lookalikes.map((w) =>
              el('li', {
                text: `⚠ ${w.where}: "${w.shown}" mixes ${(w.scripts || []).join(' and ')} letters${w.readsAs ? ` (reads as "${w.readsAs}")` : ''}`,
              }),
            ),
          )
        : null,
      c.diff ? diffBlock(c.diff) : null,
      el('p', { class: 'meta', text: `asked by ${c.client} · call ${c.call_id} · sha256 ${String(c.args_sha256).slice(0, 16)}…` }),
      countdown,
      el('div', { class: 'actions' }, approve, deny),
      msg,
    );
    const entry = { data: c, node, countdown, msg, buttons: [approve, deny] };
    if (second) {
      approve.disabled = true;
      setTimeout(() => {
        if (!entry.sent) approve.disabled = false;
      }, SECOND_TAP_GUARD_MS);
    }
    approve.addEventListener('click', () => decide(entry, true));
    deny.addEventListener('click', () => decide(entry, false));
    return entry;
  }

  function tick() {
    const now = Date.now() + offset;
    for (const [, c] of shown) {
      const msLeft = ms(c.data.expires_at) - now;
      c.countdown.textContent = msLeft > 0 ? `${left(msLeft)} left; then this card lapses (nothing runs)` : 'lapsed: nothing runs';
      c.node.classList.toggle('late', msLeft <= 20000);
    }
  }

  function render() {
    const list = $('cards');
    const cards = set ? set.cards : [];
    const key = set ? `${set.set_id}:${cards.map((c) => `${c.call_id}/${c.stage}`).join(',')}` : '';
    if (key !== setKey) {
      setKey = key;
      list.textContent = '';
      shown.clear();
      for (const c of cards) {
        const e = card(c);
        shown.set(c.call_id, e);
        list.append(e.node);
      }
    }
    $('empty').hidden = cards.length > 0;
    $('voice-bar').hidden = cards.length === 0 || !voiceOn;
    $('voice-hint').textContent = voiceHint(cards.length);
    $('count').textContent = cards.length ? `· ${cards.length}` : '';
    document.title = cards.length ? `(${cards.length}) lookfirst` : 'lookfirst';
    tick();
  }

  // One poll at a time: a poll asked for while one is in flight (after a decision) runs right after it,
  // so a set fetched before the decision is never the last one shown.
  async function poll() {
    clearTimeout(pollTimer);
    pollTimer = undefined;
    if (!device) return;
    if (polling) {
      pollAgain = true;
      return;
    }
    polling = true;
    try {
      const r = await signed('GET', '/device/api/cards');
      if ((r.status === 403 && /revoked/.test(r.body.error || '')) || (r.status === 401 && /no device is paired/.test(r.body.error || ''))) return;
      if (r.status === 200) {
        // While the person is recording, the cards stay as they were when the recording began: the words
        // ("the second one") are about the cards on screen and go to the gate against that set, so a card
        // decided elsewhere must not shift the positions under the speaker.
        if (!rec) {
          set = r.body;
          render();
        }
        status('live: cards appear by themselves', 'ok');
      } else status(`the gate refused this phone: ${r.body.error || r.status}`, 'down');
    } catch {
      status('cannot reach the gate; retrying… (nothing is approved while it is down)', 'down');
    } finally {
      polling = false;
    }
    if (pollAgain) {
      pollAgain = false;
      return poll();
    }
    if (device && !$('device').hidden && !pollTimer) pollTimer = setTimeout(poll, POLL_MS);
  }

  function showResult(text, cls) {
    const r = $('result');
    r.textContent = text;
    r.className = `result ${cls}`;
    r.hidden = false;
  }

  function describe(status, body) {
    if (status === 200 && body.outcome === 'second') return ['High risk: confirm again to approve', 'warn'];
    // The gate's own words: in pending mode an approved call runs only when the agent collects it.
    if (status === 200 && body.outcome === 'approved') return [typeof body.message === 'string' ? body.message : 'Approved', 'ok'];
    if (status === 200 && body.outcome === 'denied') return ['Denied', 'bad'];
    if (body.failed_check) return [`Refused: ${body.failed_check}${body.error ? ` (${body.error})` : ''}`, 'bad'];
    return [`Refused: ${body.error || `status ${status}`}`, 'bad'];
  }

  async function decide(c, approve) {
    if (busy || !set) return;
    busy = true;
    c.sent = true;
    for (const b of c.buttons) b.disabled = true;
    c.msg.textContent = 'sending…';
    try {
      const r = await signed(
        'POST',
        '/device/api/decide',
        JSON.stringify({ set_id: set.set_id, call_id: c.data.call_id, nonce: c.data.nonce, decision: approve ? 'approve' : 'deny' }),
        'application/json',
      );
      const [text, cls] = describe(r.status, r.body);
      c.msg.textContent = text;
      showResult(text, cls);
    } catch (err) {
      c.msg.textContent = `Not sent (${err.message}); nothing was decided.`;
      c.sent = false;
      for (const b of c.buttons) b.disabled = false;
    } finally {
      busy = false;
    }
    await poll();
  }

  // ---- voice: hold to record (voice.js), release to send a 16 kHz mono 16-bit PCM WAV
  const MAX_RECORD_MS = 14_000; // under the gate's default max_seconds (15)
  let rec;
  async function startVoice(event) {
    event.preventDefault();
    if (rec || !set || set.cards.length === 0) return;
    const msg = $('voice-msg');
    const setId = set.set_id;
    rec = { pending: true };
    try {
      const recorder = await window.LookfirstVoice.startRecording();
      if (!rec) {
        // Released before the microphone opened: nothing is sent.
        await recorder.stop();
        return;
      }
      rec = { recorder, setId, timer: setTimeout(() => void stopVoice(), MAX_RECORD_MS) };
      $('voice').classList.add('recording');
      $('voice').textContent = 'Listening… release to send';
      msg.textContent = '';
    } catch (err) {
      rec = undefined;
      msg.textContent = `No microphone (${err.message}): answer by tapping instead.`;
    }
  }

  async function stopVoice() {
    if (!rec) return;
    const r = rec;
    rec = undefined;
    if (!r.recorder) return;
    clearTimeout(r.timer);
    $('voice').classList.remove('recording');
    $('voice').textContent = 'Hold to speak';
    const wav = await r.recorder.stop();
    const msg = $('voice-msg');
    if (wav.byteLength < 44 + 16000 * 0.3 * 2) {
      msg.textContent = 'Too short: hold the button while you speak.';
      return;
    }
    msg.textContent = 'sending…';
    try {
      const res = await signed('POST', `/device/api/voice?set=${encodeURIComponent(r.setId)}`, wav, 'audio/wav');
      const [text, cls] = describe(res.status, res.body);
      msg.textContent = res.body.transcript ? `Heard "${res.body.transcript}".` : '';
      showResult(text, cls);
    } catch (err) {
      msg.textContent = `Not sent (${err.message}); nothing was decided.`;
    }
    await poll();
  }

  function start() {
    view('device');
    $('who').textContent = `This phone: ${device.name} (${device.id}), for user ${device.user}.`;
    status('connecting…', '');
    void fetchMe();
    void poll();
  }

  // Whether the gate takes voice; a failure leaves the button hidden (tapping always works).
  async function fetchMe() {
    try {
      const r = await signed('GET', '/device/api/me');
      voiceOn = r.status === 200 && r.body.voice === true;
    } catch {
      voiceOn = false;
    }
    render();
  }

  $('pair-form').addEventListener('submit', pair);
  $('pair-code').addEventListener('input', () => {
    $('pair-msg').textContent = '';
  });
  $('forget').addEventListener('click', forget);
  $('pair-keep').addEventListener('click', keepPairing);
  // A pairing link opened in the tab that is already showing the cards changes only the hash.
  window.addEventListener('hashchange', () => {
    if (!new URLSearchParams(location.hash.slice(1)).get('pair')) return;
    clearTimeout(pollTimer);
    pollTimer = undefined;
    showPairing();
  });
  const voice = $('voice');
  voice.addEventListener('pointerdown', startVoice);
  for (const ev of ['pointerup', 'pointercancel', 'pointerleave']) voice.addEventListener(ev, () => void stopVoice());
  voice.addEventListener('contextmenu', (e) => e.preventDefault());
  setInterval(tick, 1000);
  if ('serviceWorker' in navigator) navigator.serviceWorker.register('/device/sw.js', { scope: '/device/' }).catch(() => {});
  if (device && !new URLSearchParams(location.hash.slice(1)).get('pair')) start();
  else showPairing();
})();
