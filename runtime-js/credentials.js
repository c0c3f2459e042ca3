// credentials.js — what this page may present to the proxy, and how the operator is told apart
// from the page.
//
// The page credential (`t=`) comes with the runtime's own URL: the proxy wrote it into the
// `<script src="/__shepherd/runtime.js?t=…">` it injected, derived from this document's origin,
// so it only opens this origin's trace upload and instrument endpoints. Any script of the page
// can read it, which is why it is worth nothing anywhere else.
//
// The operator secret never reaches the page: CONFIG carries only its SHA-256, and
// `__shepherd.control(secret)` hashes what it is given. Everything here uses captured natives
// and plain operators, so page code that patches prototypes cannot observe the argument.

/** The value of query parameter `name` in `url`, or '' (no decoding: tokens are hex). */
function queryParam(url, name) {
  const q = strIndexOf(url, '?');
  if (q < 0) return '';
  const key = name + '=';
  let i = q + 1;
  while (i < url.length) {
    let end = strIndexOf(url, '&', i);
    if (end < 0) end = url.length;
    if (strSlice(url, i, i + key.length) === key) return strSlice(url, i + key.length, end);
    i = end + 1;
  }
  return '';
}

/** This document's page credential: CONFIG.token when the embedder set one, else `t=` of the
 * runtime's own script URL (the runtime is the first script, so currentScript is ours). */
const PAGE_TOKEN = (function () {
  if (typeof CONFIG.token === 'string') return CONFIG.token;
  try {
    const d = G.document;
    const el = d && docCurrentScript !== null ? docCurrentScript(d) : null;
    const src = el && scriptSrc !== null ? scriptSrc(el) : '';
    return queryParam(NativeString(src), 't');
  } catch (_) {
    return '';
  }
})();

/** Trace document ids start with this: the proxy accepts a batch only when the id's prefix
 * belongs to the origin it arrives on, so no origin can write into another's trace. */
const DOC_PREFIX = strSlice(PAGE_TOKEN, 0, 12);

const SHA_K = [
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

/** SHA-256 of the UTF-8 encoding of `s`, as lower-case hex. Small inputs only (secrets). */
function sha256Hex(s) {
  // UTF-8 bytes.
  const bytes = [];
  for (let i = 0; i < s.length; i++) {
    let c = strCharCode(s, i);
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length) {
      const d = strCharCode(s, i + 1);
      if (d >= 0xdc00 && d < 0xe000) {
        c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        i++;
      }
    }
    if (c < 0x80) {
      bytes[bytes.length] = c;
    } else if (c < 0x800) {
      bytes[bytes.length] = 0xc0 | (c >> 6);
      bytes[bytes.length] = 0x80 | (c & 63);
    } else if (c < 0x10000) {
      bytes[bytes.length] = 0xe0 | (c >> 12);
      bytes[bytes.length] = 0x80 | ((c >> 6) & 63);
      bytes[bytes.length] = 0x80 | (c & 63);
    } else {
      bytes[bytes.length] = 0xf0 | (c >> 18);
      bytes[bytes.length] = 0x80 | ((c >> 12) & 63);
      bytes[bytes.length] = 0x80 | ((c >> 6) & 63);
      bytes[bytes.length] = 0x80 | (c & 63);
    }
  }
  const bitLen = bytes.length * 8;
  bytes[bytes.length] = 0x80;
  while (bytes.length % 64 !== 56) bytes[bytes.length] = 0;
  // Lengths here fit in 32 bits.
  bytes[bytes.length] = 0;
  bytes[bytes.length] = 0;
  bytes[bytes.length] = 0;
  bytes[bytes.length] = 0;
  bytes[bytes.length] = (bitLen >>> 24) & 255;
  bytes[bytes.length] = (bitLen >>> 16) & 255;
  bytes[bytes.length] = (bitLen >>> 8) & 255;
  bytes[bytes.length] = bitLen & 255;
  const h = [
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
  ];
  const w = [];
  for (let off = 0; off < bytes.length; off += 64) {
    for (let i = 0; i < 16; i++) {
      const j = off + i * 4;
      w[i] = ((bytes[j] << 24) | (bytes[j + 1] << 16) | (bytes[j + 2] << 8) | bytes[j + 3]) | 0;
    }
    for (let i = 16; i < 64; i++) {
      const a = w[i - 15];
      const b = w[i - 2];
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) | 0;
    }
    let a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const ch = (e & f) ^ (~e & g);
      const t1 = (k + S1 + ch + SHA_K[i] + w[i]) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const maj = (a & b) ^ (a & c) ^ (b & c);
      const t2 = (S0 + maj) | 0;
      k = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h[0] = (h[0] + a) | 0;
    h[1] = (h[1] + b) | 0;
    h[2] = (h[2] + c) | 0;
    h[3] = (h[3] + d) | 0;
    h[4] = (h[4] + e) | 0;
    h[5] = (h[5] + f) | 0;
    h[6] = (h[6] + g) | 0;
    h[7] = (h[7] + k) | 0;
  }
  const hex = '0123456789abcdef';
  let out = '';
  for (let i = 0; i < 8; i++) {
    for (let sh = 28; sh >= 0; sh -= 4) out += hex[(h[i] >>> sh) & 15];
  }
  return out;
}

/** Whether `secret` is the operator's (its hash is the one the proxy rendered into CONFIG). */
function isOperator(secret) {
  if (typeof secret !== 'string' || secret.length === 0 || secret.length > 1024) return false;
  const want = CONFIG.controlHash;
  return typeof want === 'string' && want.length === 64 && sha256Hex(secret) === want;
}
