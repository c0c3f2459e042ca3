// storage.js — Web Storage (localStorage, sessionStorage) as locations, and `storage` events.
//
// Key `k` of a storage area is the location `Storage[<oid>].<k>`: the name instrumented code's
// `localStorage.k` logs (T.objEntry), so property and method accesses meet. `getItem` reads it
// (value `null` when missing), `setItem`/`removeItem` write it, `clear()` writes every key
// present; `length`/`key(i)` read `Storage[<oid>].length`, which adding or removing a key
// writes. A `storage` event is another document's change arriving here: its action writes the
// key it names (`clear()` elsewhere: `length`), so reads in other actions race with it.
// Keys that are not strings or numbers are not logged (naming them would run page code).

const STORAGE_CAP = 256;

function storageKey(k) {
  const t = typeof k;
  return t === 'string' ? k : t === 'number' ? NativeString(k) : null;
}

function installStorage() {
  if (!REC || StorageP === null) return;
  const getItem = StorageP.getItem;
  const setItem = StorageP.setItem;
  const removeItem = StorageP.removeItem;
  const clear = StorageP.clear;
  const key = StorageP.key;
  const lenGet = getterOf(StorageP, 'length');
  const has = (self, k) => rApply(getItem, self, [k]) !== null;
  patch(StorageP, 'getItem', function (k) {
    const v = rApply(getItem, this, arguments);
    const name = storageKey(k);
    if (name !== null) readEntry(objEntry(this, name), v, true, callPos(this, 'getItem'));
    return v;
  });
  patch(StorageP, 'setItem', function (k, value) {
    const name = storageKey(k);
    const added = name !== null && !has(this, name);
    const r = rApply(setItem, this, arguments);
    if (name !== null) {
      writeEntry(objEntry(this, name), NativeString(value), callPos(this, 'setItem'));
      if (added) writeEntry(objEntry(this, 'length'), undefined);
    }
    return r;
  });
  patch(StorageP, 'removeItem', function (k) {
    const name = storageKey(k);
    const present = name !== null && has(this, name);
    const r = rApply(removeItem, this, arguments);
    if (name !== null) {
      writeEntry(objEntry(this, name), undefined, callPos(this, 'removeItem'));
      if (present) writeEntry(objEntry(this, 'length'), undefined);
    }
    return r;
  });
  patch(StorageP, 'clear', function () {
    const p = callPos(this, 'clear');
    const n = lenGet !== null ? lenGet(this) : 0;
    for (let i = 0; i < n && i < STORAGE_CAP; i++) {
      const k = rApply(key, this, [i]);
      if (k !== null) writeEntry(objEntry(this, k), undefined, p);
    }
    writeEntry(objEntry(this, 'length'), undefined, p);
    return rApply(clear, this, arguments);
  });
  patch(StorageP, 'key', function () {
    readEntry(objEntry(this, 'length'), undefined, false, callPos(this, 'key'));
    return rApply(key, this, arguments);
  });
  if (lenGet !== null) {
    const d = getDesc(StorageP, 'length');
    defProp(StorageP, 'length', {
      configurable: true,
      enumerable: d.enumerable,
      get: function () {
        const n = lenGet(this);
        readEntry(objEntry(this, 'length'));
        return n;
      },
    });
  }
}

/** The action of a `storage` event writes what the other document changed. */
function storageEventWrites(ev) {
  if (seArea === null) return;
  const area = seArea(ev);
  if (area === null) return;
  const k = seKey(ev);
  if (k === null) writeEntry(objEntry(area, 'length'), undefined);
  else writeEntry(objEntry(area, k), seNew(ev));
}
