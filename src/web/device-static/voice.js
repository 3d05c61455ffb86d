// lookfirst device page: voice recording. Records the microphone with getUserMedia and Web Audio while
// the person holds the button, and encodes what it heard as the gate wants it: a 16 kHz, mono, 16-bit
// signed little-endian PCM WAV (docs/device-api.md, "Deciding by voice"). The gate transcribes it; this
// file never interprets the words.

(() => {
  /** Opens the microphone and starts recording; `stop()` ends it and resolves to the WAV (ArrayBuffer). */
  async function startRecording() {
    const stream = await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true } });
    const ctx = new AudioContext();
    const source = ctx.createMediaStreamSource(stream);
    // ScriptProcessor needs no worklet module file; it is enough for a few seconds of speech.
    const node = ctx.createScriptProcessor(4096, 1, 1);
    const chunks = [];
    node.onaudioprocess = (e) => chunks.push(new Float32Array(e.inputBuffer.getChannelData(0)));
    source.connect(node);
    node.connect(ctx.destination);
    return {
      async stop() {
        node.disconnect();
        source.disconnect();
        for (const t of stream.getTracks()) t.stop();
        const rate = ctx.sampleRate;
        await ctx.close();
        return toWav(chunks, rate);
      },
    };
  }

  /** Float32 chunks at `rate` Hz → 16 kHz mono signed 16-bit little-endian WAV (averaging down-sampler). */
  function toWav(chunks, rate) {
    let n = 0;
    for (const c of chunks) n += c.length;
    const all = new Float32Array(n);
    let at = 0;
    for (const c of chunks) {
      all.set(c, at);
      at += c.length;
    }
    const ratio = rate / 16000;
    const out = new Int16Array(Math.floor(n / ratio));
    for (let i = 0; i < out.length; i++) {
      const from = Math.floor(i * ratio);
      const to = Math.max(from + 1, Math.floor((i + 1) * ratio));
      let sum = 0;
      for (let j = from; j < to && j < n; j++) sum += all[j];
      const v = Math.max(-1, Math.min(1, sum / (to - from)));
      out[i] = v < 0 ? v * 0x8000 : v * 0x7fff;
    }
    const buf = new ArrayBuffer(44 + out.byteLength);
    const dv = new DataView(buf);
    const str = (o, s) => {
      for (let i = 0; i < s.length; i++) dv.setUint8(o + i, s.charCodeAt(i));
    };
    str(0, 'RIFF');
    dv.setUint32(4, 36 + out.byteLength, true);
    str(8, 'WAVE');
    str(12, 'fmt ');
    dv.setUint32(16, 16, true);
    dv.setUint16(20, 1, true); // PCM
    dv.setUint16(22, 1, true); // mono
    dv.setUint32(24, 16000, true);
    dv.setUint32(28, 32000, true); // bytes per second
    dv.setUint16(32, 2, true); // block align
    dv.setUint16(34, 16, true); // bits per sample
    str(36, 'data');
    dv.setUint32(40, out.byteLength, true);
    new Int16Array(buf, 44).set(out);
    return buf;
  }

  window.LookfirstVoice = Object.freeze({ startRecording, toWav });
})();
