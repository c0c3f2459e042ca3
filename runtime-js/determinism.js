// determinism.js — deterministic mode (on in replay, or with `deterministic: true`): seeded
// Math.random / crypto.getRandomValues / crypto.randomUUID, a virtual clock behind Date,
// Date.now and performance.now, and the UTC time zone.
//
// The virtual clock starts at CONFIG.clock (ms since the epoch) and only moves
// deterministically: every reading advances it by CLOCK_STEP_MS (so busy-wait loops terminate)
// and a timer tick moves it to at least its registration time plus its delay. The same sequence
// of callbacks therefore sees the same times.

const DET = CONFIG.mode === 'replay' || CONFIG.deterministic === true;
const CLOCK_STEP_MS = 1;
let vClock = typeof CONFIG.clock === 'number' ? CONFIG.clock : 1700000000000;
const vClockStart = vClock;

/** sfc32, seeded from CONFIG.seed through splitmix32: small, fast, good enough for pages. */
function makeRng(seed) {
  let s = seed >>> 0;
  const split = () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = split();
  let b = split();
  let c = split();
  let d = split();
  return () => {
    a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
    const t = (a + b + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) >>> 0;
    return t >>> 0;
  };
}

function vNow() {
  vClock += CLOCK_STEP_MS;
  return vClock;
}

/** Moves the virtual clock to at least `t` (timer ticks). */
function advanceClockTo(t) {
  if (t > vClock) vClock = t;
}

function installDeterminism() {
  if (!DET) return;
  const next = makeRng(typeof CONFIG.seed === 'number' ? CONFIG.seed : 1);
  patch(NativeMath, 'random', function () {
    return next() / 4294967296;
  });
  if (nCrypto) {
    const CP = getProto(nCrypto);
    patch(CP, 'getRandomValues', function (array) {
      // Let the native reject bad arguments (type, quota) first.
      const r = nGetRandomValues(this, array);
      const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
      let w = 0;
      for (let i = 0; i < bytes.length; i++) {
        if ((i & 3) === 0) w = next();
        bytes[i] = (w >>> ((i & 3) * 8)) & 255;
      }
      return r;
    });
    if (typeof CP.randomUUID === 'function') {
      patch(CP, 'randomUUID', function () {
        let h = '';
        for (let i = 0; i < 4; i++) {
          const w = next();
          h += strSlice('00000000' + numToString(w, 16), -8);
        }
        // version 4, variant 10xx
        const v = numToString((parseInt(strSlice(h, 16, 17), 16) & 3) | 8, 16);
        return strSlice(h, 0, 8) + '-' + strSlice(h, 8, 12) + '-4' + strSlice(h, 13, 16) + '-' + v +
          strSlice(h, 17, 20) + '-' + strSlice(h, 20, 32);
      });
    }
  }
  // Date: a function that behaves like the native constructor but reads the virtual clock, and
  // local-time methods answer in UTC.
  const ND = NativeDate;
  const VDate = function Date(a, b, c, d, e, f, g) {
    const n = arguments.length;
    if (new.target === undefined) return rApply(ND.prototype.toString, new ND(vNow()), []);
    const nt = new.target === VDate ? ND : new.target;
    if (n === 0) return rConstruct(ND, [vNow()], nt);
    if (n === 1) return rConstruct(ND, [a], nt);
    return rConstruct(ND, [ND.UTC(a, b, n > 2 ? c : 1, n > 3 ? d : 0, n > 4 ? e : 0, n > 5 ? f : 0, n > 6 ? g : 0)], nt);
  };
  VDate.prototype = ND.prototype;
  VDate.now = function now() {
    return vNow();
  };
  VDate.parse = ND.parse;
  VDate.UTC = ND.UTC;
  defProp(ND.prototype, 'constructor', { value: VDate, writable: true, configurable: true });
  patch(G, 'Date', VDate);
  const DP = ND.prototype;
  for (const n of ['FullYear', 'Month', 'Date', 'Day', 'Hours', 'Minutes', 'Seconds', 'Milliseconds']) {
    const utcGet = DP['getUTC' + n];
    patch(DP, 'get' + n, function () {
      return rApply(utcGet, this, []);
    });
    const utcSet = DP['setUTC' + n];
    if (typeof utcSet === 'function') {
      patch(DP, 'set' + n, function () {
        return rApply(utcSet, this, arguments);
      });
    }
  }
  patch(DP, 'getTimezoneOffset', function () {
    return 0;
  });
  if (perfObj && nPerfNow) {
    patch(getProto(perfObj), 'now', function () {
      return vNow() - vClockStart;
    });
  }
}
