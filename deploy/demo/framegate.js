// framegate.js: the client of framegate's /rooms protocol (docs/PROTOCOL.md),
// for browsers and Node. No dependencies: browsers use their WebSocket; Node
// passes the `ws` package's class ({ WebSocket }). docs/CLIENT.md is the
// manual. What it adds over a raw socket:
// - a token (or a getToken() callback, asked before every connect) in ?token=;
// - reconnection with exponential backoff and full jitter, after any drop;
// - rooms that lose nothing: each room's epoch and contiguous offset are kept,
//   a gap or a reconnect rejoins with "since", repeats are dropped, and the
//   app gets every message once, in offset order;
// - one promise per op, settled by the op's "id" answer.

export const VERSION = '1.0.0';

const DEFAULTS = {
  minReconnectDelay: 500,  // ms: the first retry waits between this and twice this
  maxReconnectDelay: 10000,  // ms: no retry waits longer
  connectTimeout: 10000,  // ms a handshake may take before it is abandoned
  answerTimeout: 5000,  // ms before an unanswered join or presence is asked again
  publishTimeout: 10000,  // ms before an unanswered publish is rejected
  random: Math.random,  // the jitter's source (tests may pass their own)
};

// An op refused by the server ({"error":...}), or settled without an answer.
export class FramegateError extends Error {
  constructor(message, { code = 'server', answer } = {}) {
    super(message);
    this.name = 'FramegateError';
    // 'server': the server refused it; 'closed': the client was closed;
    // 'unknown': the connection dropped, or no answer came in time, so a
    // publish may or may not have been published.
    this.code = code;
    this.answer = answer;
  }
}

// The delay before reconnect attempt `attempt` (1 for the first retry):
// uniform in [min, min(max, min * 2^attempt)] ("full jitter" above a floor).
export function backoffDelay(attempt, { minReconnectDelay: min, maxReconnectDelay: max, random }) {
  const ceiling = Math.max(min, Math.min(max, min * 2 ** Math.min(attempt, 30)));
  return min + random() * (ceiling - min);
}

// The URL with ?token= set (any earlier token parameter replaced).
function withToken(url, token) {
  if (token === undefined || token === null || token === '') return url;
  const u = new URL(url);
  u.searchParams.set('token', token);
  return u.toString();
}

export class FramegateClient {
  #url;
  #opts;
  #WebSocket;
  #listeners = new Map();
  #ws = null;
  #state = 'idle';
  #attempt = 0;
  #retryTimer = null;
  #connectTimer = null;
  #nextId = 1;
  #pending = new Map();  // id -> { op, onAnswer, onLost, timer }
  #queue = [];  // ops waiting for an open connection
  #rooms = new Map();  // room name -> room state (see join())
  #firstOpen = null;
  #generation = 0;  // counts #open() calls: a token fetched for an older one is dropped

  // url: ws(s)://host/rooms. options: token or getToken, WebSocket (Node),
  // and the timings of DEFAULTS.
  constructor(url, options = {}) {
    this.#url = url;
    this.#opts = { ...DEFAULTS, ...options };
    this.#WebSocket = options.WebSocket ?? globalThis.WebSocket;
    if (typeof this.#WebSocket !== 'function')
      throw new TypeError('no WebSocket class: pass { WebSocket } (in Node, the ws package\'s)');
  }

  // 'idle', 'connecting', 'open', 'reconnecting' or 'closed'.
  get state() { return this.#state; }

  // Subscribes fn to an event; returns a function that unsubscribes it.
  on(event, fn) {
    if (!this.#listeners.has(event)) this.#listeners.set(event, new Set());
    this.#listeners.get(event).add(fn);
    return () => this.off(event, fn);
  }

  off(event, fn) { this.#listeners.get(event)?.delete(fn); }

  #emit(event, detail) {
    for (const fn of [...(this.#listeners.get(event) ?? [])]) {
      try { fn(detail); } catch (e) { if (event !== 'error') this.#emit('error', e); }
    }
  }

  #setState(state, detail) {
    this.#state = state;
    this.#emit(state, detail);
    this.#emit('state', { state, ...detail });
  }

  // Starts connecting (and reconnecting until close()). Resolves at the
  // first open; rejects if close() comes first.
  connect() {
    if (this.#state === 'closed') return Promise.reject(new FramegateError('the client is closed', { code: 'closed' }));
    if (!this.#firstOpen) {
      let resolve, reject;
      const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
      promise.catch(() => {});  // close() before open is not an unhandled rejection
      this.#firstOpen = { promise, resolve, reject };
    }
    if (this.#state === 'idle') this.#open();
    return this.#firstOpen.promise;
  }

  // Closes for good: no reconnect; unsettled ops are rejected.
  close(code = 1000, reason = '') {
    if (this.#state === 'closed') return;
    clearTimeout(this.#retryTimer);
    clearTimeout(this.#connectTimer);
    const ws = this.#ws;
    this.#ws = null;
    if (ws) try { ws.close(code, reason); } catch { /* already closing */ }
    const closed = new FramegateError('the client is closed', { code: 'closed' });
    for (const p of this.#pending.values()) { clearTimeout(p.timer); p.reject?.(closed); }
    this.#pending.clear();
    for (const q of this.#queue) q.reject?.(closed);
    this.#queue = [];
    for (const room of this.#rooms.values()) room.settle?.reject(closed);
    this.#rooms.clear();
    this.#firstOpen?.reject(closed);
    this.#setState('closed', { code, reason });
  }

  // Drops the connection (or the wait before the next attempt) and connects
  // again at once, with a new token: for a login, or a "retry now" button.
  // Rooms are rejoined with since, as after any drop.
  reconnect() {
    if (this.#state === 'closed') return;
    if (this.#state === 'idle') { this.connect(); return; }
    clearTimeout(this.#retryTimer);
    const ws = this.#ws;
    this.#ws = null;
    if (ws) try { ws.close(1000, 'reconnecting'); } catch { /* already closing */ }
    this.#settleDropped();
    this.#attempt = 0;
    this.#open();
  }

  async #open() {
    const generation = ++this.#generation;
    this.#setState('connecting', { attempt: this.#attempt });
    let token = this.#opts.token;
    try {
      if (this.#opts.getToken) token = await this.#opts.getToken();
    } catch (e) {
      if (generation !== this.#generation || this.#state !== 'connecting') return;
      this.#emit('error', e);
      return this.#dropped({ code: 1006, reason: `getToken failed: ${e?.message ?? e}` });
    }
    // Closed, or started again, while the token was fetched.
    if (generation !== this.#generation || this.#state !== 'connecting') return;
    let ws;
    try {
      ws = new this.#WebSocket(withToken(this.#url, token));
    } catch (e) {
      this.#emit('error', e);
      return this.#dropped({ code: 1006, reason: String(e?.message ?? e) });
    }
    this.#ws = ws;
    this.#connectTimer = setTimeout(() => { if (this.#ws === ws) ws.close(); }, this.#opts.connectTimeout);
    ws.onopen = () => { if (this.#ws === ws) this.#onOpen(); };
    ws.onmessage = (ev) => { if (this.#ws === ws) this.#onMessage(ev.data); };
    ws.onerror = (ev) => { if (this.#ws === ws) this.#emit('error', ev?.error ?? new Error(ev?.message ?? 'WebSocket error')); };
    ws.onclose = (ev) => {
      if (this.#ws !== ws) return;
      this.#ws = null;
      this.#dropped({ code: ev.code, reason: ev.reason });
    };
  }

  #onOpen() {
    clearTimeout(this.#connectTimer);
    this.#attempt = 0;
    this.#setState('open');
    this.#firstOpen?.resolve();
    for (const room of this.#rooms.values()) this.#sendJoin(room);
    const queued = this.#queue;
    this.#queue = [];
    for (const q of queued) this.#send(q);
  }

  // The connection closed or never opened: settle what it carried, then retry.
  #dropped({ code, reason }) {
    if (this.#state === 'closed') return;
    this.#settleDropped();
    this.#attempt += 1;
    const delay = backoffDelay(this.#attempt, this.#opts);
    this.#setState('reconnecting', { delay, attempt: this.#attempt, code, reason });
    this.#retryTimer = setTimeout(() => this.#open(), delay);
  }

  #settleDropped() {
    clearTimeout(this.#connectTimer);
    for (const [id, p] of this.#pending) {
      clearTimeout(p.timer);
      this.#pending.delete(id);
      p.onLost();
    }
    for (const room of this.#rooms.values()) room.joinId = null;
  }

  // Sends op now if the connection is open, else when it opens. An entry is
  // { op, onAnswer(answer), onLost(), reject, timeout, onTimeout }.
  #send(entry) {
    if (this.#state !== 'open' || !this.#ws) { this.#queue.push(entry); return; }
    const id = this.#nextId++;
    if (entry.onAnswer) {
      const timer = entry.timeout ? setTimeout(() => {
        if (this.#pending.get(id) !== entry) return;
        this.#pending.delete(id);
        entry.onTimeout();
      }, entry.timeout) : null;
      entry.timer = timer;
      this.#pending.set(id, entry);
    }
    this.#ws.send(JSON.stringify(entry.onAnswer ? { ...entry.op, id } : entry.op));
    return id;
  }

  // An op answered by id: resolves with the answer, rejects on {"error"}.
  // An idempotent op (presence) is asked again after a drop or a timeout; a
  // publish is rejected with code 'unknown' instead (it may have gone out).
  #request(op, { idempotent }) {
    if (this.#state === 'closed') return Promise.reject(new FramegateError('the client is closed', { code: 'closed' }));
    return new Promise((resolve, reject) => {
      const entry = {
        op, reject,
        timeout: idempotent ? this.#opts.answerTimeout : this.#opts.publishTimeout,
        onAnswer: (answer) => {
          if (typeof answer.error === 'string') reject(new FramegateError(answer.error, { answer }));
          else resolve(answer);
        },
        onLost: () => {
          if (idempotent) this.#send(entry);
          else reject(new FramegateError('the connection dropped before an answer: it may or may not have been published', { code: 'unknown' }));
        },
        onTimeout: () => {
          if (idempotent) this.#send(entry);
          else reject(new FramegateError('no answer in time: it may or may not have been published', { code: 'unknown' }));
        },
      };
      this.#send(entry);
    });
  }

  // Publishes data (any JSON value) to room. Resolves with the answer,
  // {"published":room,"offset":N} (offset only where the room keeps history).
  publish(room, data) {
    if (data === undefined) return Promise.reject(new TypeError('publish needs data'));
    return this.#request({ op: 'publish', room, data }, { idempotent: false });
  }

  // Resolves with the room's members, [{ user, connections }, ...].
  async presence(room) {
    const answer = await this.#request({ op: 'presence', room }, { idempotent: true });
    return answer.members;
  }

  // Joins room, and keeps it joined across reconnects until leave() or
  // close(). options: onMessage(data, { room, offset }) for each message,
  // once and in order; presenceEvents: a function({ room, event, user }) for
  // each member joining or leaving (or true to only get the client's
  // 'presence' events). Resolves with the first answer ({ epoch, offset } of
  // the room's top, or { history: false }); rejects on {"error"} (forbidden).
  join(room, { onMessage = () => {}, presenceEvents = null } = {}) {
    if (this.#state === 'closed') return Promise.reject(new FramegateError('the client is closed', { code: 'closed' }));
    const existing = this.#rooms.get(room);
    if (existing) {
      Object.assign(existing, { onMessage, presenceEvents });
      return existing.joinedPromise;
    }
    const state = {
      name: room, onMessage, presenceEvents,
      epoch: null,  // the room's epoch once known (history on)
      offset: 0,  // the last offset delivered to the app, all below it delivered too
      history: null,  // true/false once the server said
      held: new Map(),  // offset -> message that arrived above a gap
      joinId: null,  // the id of the join in flight
      settle: null,
    };
    state.joinedPromise = new Promise((resolve, reject) => { state.settle = { resolve, reject }; });
    state.joinedPromise.catch(() => {});
    this.#rooms.set(room, state);
    if (this.#state === 'open') this.#sendJoin(state);
    return state.joinedPromise;
  }

  // Leaves room: no more messages from it. Resolves once the server answered
  // (or at once when not connected: a later connection does not rejoin it).
  leave(room) {
    const state = this.#rooms.get(room);
    if (!state) return Promise.resolve();
    this.#rooms.delete(room);
    state.settle?.reject(new FramegateError('left before the join was answered', { code: 'closed' }));
    if (this.#state !== 'open') return Promise.resolve();
    return this.#request({ op: 'leave', room }, { idempotent: true }).then(() => {});
  }

  // The position kept for room, { epoch, offset }, or null (not joined).
  position(room) {
    const s = this.#rooms.get(room);
    return s ? { epoch: s.epoch, offset: s.offset } : null;
  }

  // Asks the server for room's join: with "since" once a position is known,
  // "recover" before. Asked again when no answer comes within answerTimeout
  // (a worker failing over loses it, PROTOCOL.md).
  #sendJoin(room) {
    const op = { op: 'join', room: room.name };
    if (room.history === false) { /* a plain join: no positions to keep */ }
    else if (room.epoch !== null) op.since = { epoch: room.epoch, offset: room.offset };
    else op.recover = true;
    if (room.presenceEvents) op.presence_events = true;
    const entry = {
      op,
      timeout: this.#opts.answerTimeout,
      onAnswer: (answer) => this.#onJoinAnswer(room, answer),
      onLost: () => {},  // rejoined by #onOpen
      onTimeout: () => { if (this.#rooms.get(room.name) === room) this.#sendJoin(room); },
    };
    room.joinId = this.#send(entry) ?? null;
  }

  #onJoinAnswer(room, answer) {
    if (this.#rooms.get(room.name) !== room) return;
    room.joinId = null;
    if (typeof answer.error === 'string') {
      this.#rooms.delete(room.name);
      const error = new FramegateError(answer.error, { answer });
      if (room.settle) { room.settle.reject(error); room.settle = null; }
      else this.#emit('error', error);
      return;
    }
    const first = room.settle;
    room.settle = null;
    first?.resolve(answer);
    if (answer.history === false) {
      room.history = false;
      if (answer.recovered === false) this.#emit('unrecovered', { room: room.name, reason: answer.reason ?? 'no history' });
      this.#release(room, () => true);
      return;
    }
    room.history = true;
    let again = false;
    if (answer.recovered === undefined) {
      // The first join: the room's top is where this member starts. Without
      // one (history unavailable), live without positions until a reconnect.
      if (typeof answer.epoch === 'string') {
        [room.epoch, room.offset] = [answer.epoch, answer.offset];
        this.#drain(room);
      } else {
        this.#release(room, () => true);
      }
    } else if (answer.recovered === true) {
      this.#drain(room);
      this.#emit('recovered', { room: room.name, epoch: room.epoch, offset: room.offset });
      again = answer.offset > room.offset;  // the answer's top is above what came: ask again
    } else {
      this.#emit('unrecovered', { room: room.name, reason: answer.reason, epoch: answer.epoch, offset: answer.offset });
      // What arrived is delivered; the rest is lost. Then live from the top.
      const sameEpoch = answer.epoch === undefined || answer.epoch === room.epoch;
      const last = this.#release(room, () => true);
      if (typeof answer.epoch === 'string') [room.epoch, room.offset] = [answer.epoch, answer.offset];
      if (sameEpoch && last !== null) room.offset = Math.max(room.offset, last);
    }
    if (again || room.held.size) this.#sendJoin(room);  // a gap is still open
  }

  // Delivers the held messages that `keep` accepts, in offset order, and
  // forgets the others; returns the last offset delivered (or null).
  #release(room, keep) {
    const offsets = [...room.held.keys()].sort((a, b) => a - b);
    let last = null;
    for (const o of offsets) {
      const msg = room.held.get(o);
      room.held.delete(o);
      if (keep(o)) { this.#deliver(room, msg); last = o; }
    }
    return last;
  }

  // Delivers held messages that follow the position; drops those at or below it.
  #drain(room) {
    for (const o of [...room.held.keys()]) if (o <= room.offset) room.held.delete(o);
    while (room.held.has(room.offset + 1)) {
      const msg = room.held.get(room.offset + 1);
      room.held.delete(room.offset + 1);
      room.offset += 1;
      this.#deliver(room, msg);
    }
  }

  #deliver(room, msg) {
    try { room.onMessage(msg.data, { room: room.name, offset: msg.offset }); } catch (e) { this.#emit('error', e); }
  }

  #onMessage(text) {
    let msg;
    try { msg = JSON.parse(text); } catch { return this.#emit('error', new Error(`not JSON from the server: ${String(text).slice(0, 200)}`)); }
    if (msg === null || typeof msg !== 'object') return;
    if (msg.id !== undefined && this.#pending.has(msg.id)) {
      const entry = this.#pending.get(msg.id);
      this.#pending.delete(msg.id);
      clearTimeout(entry.timer);
      return entry.onAnswer(msg);
    }
    if (typeof msg.joined === 'string' && msg.id === undefined) {
      // A server that does not repeat ids yet: the answer is the room's join in flight.
      const room = this.#rooms.get(msg.joined);
      const entry = room?.joinId !== null ? this.#pending.get(room?.joinId) : undefined;
      if (entry) { this.#pending.delete(room.joinId); clearTimeout(entry.timer); entry.onAnswer(msg); }
      return;
    }
    if (typeof msg.error === 'string') return this.#emit('error', new FramegateError(msg.error, { answer: msg }));
    if (typeof msg.room !== 'string') return;
    const room = this.#rooms.get(msg.room);
    if (!room) return;  // left, or never joined
    if (typeof msg.presence_event === 'string') {
      const event = { room: msg.room, event: msg.presence_event, user: msg.user };
      if (typeof room.presenceEvents === 'function') {
        try { room.presenceEvents(event); } catch (e) { this.#emit('error', e); }
      }
      return this.#emit('presence', event);
    }
    if (!('data' in msg)) return;
    this.#onDelivery(room, msg);
  }

  #onDelivery(room, msg) {
    if (typeof msg.offset !== 'number') return this.#deliver(room, msg);  // no history: as it comes
    if (room.epoch === null) {
      // Before the first join's answer: held until the room's top is known.
      if (room.history === null) room.held.set(msg.offset, msg);
      else this.#deliver(room, msg);
      return;
    }
    if (msg.offset <= room.offset) return;  // delivered already
    if (msg.offset === room.offset + 1) {
      room.offset = msg.offset;
      this.#deliver(room, msg);
      return this.#drain(room);
    }
    room.held.set(msg.offset, msg);
    if (room.joinId === null) this.#sendJoin(room);  // a gap: ask for what is missing
  }
}

export default FramegateClient;
