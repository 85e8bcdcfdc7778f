// A small in-process server speaking /rooms as docs/PROTOCOL.md writes it
// (ids, history with epochs and offsets, since/recover, presence), for the
// client library's tests. Tests steer it: refuse handshakes, drop or close
// connections, hide deliveries from one connection (a gap), swallow
// answers, start a new epoch, trim the history.
import { WebSocketServer } from 'ws';

export class FakeServer {
  // history: false behaves like --no-redis (no offsets, "history":false).
  static async start({ history = true, historySize = 100 } = {}) {
    const s = new FakeServer();
    s.history = history;
    s.historySize = historySize;
    s.rooms = new Map();
    s.conns = new Set();
    s.handshakes = [];  // { token, accepted } per handshake, in order
    s.ops = [];  // every op received, in order
    s.refuse = 0;  // how many coming handshakes to answer 401
    s.acceptToken = () => true;
    s.onOp = null;  // (conn, op) => true to swallow the op (no answer, no effect)
    s.epochs = 0;
    s.wss = new WebSocketServer({
      host: '127.0.0.1', port: 0,
      verifyClient: (info, done) => {
        const token = new URL(info.req.url, 'http://x').searchParams.get('token');
        const accepted = s.refuse === 0 && s.acceptToken(token);
        if (s.refuse > 0) s.refuse -= 1;
        s.handshakes.push({ token, accepted });
        if (accepted) done(true); else done(false, 401, 'token refused');
      },
    });
    await new Promise((resolve) => s.wss.once('listening', resolve));
    s.port = s.wss.address().port;
    s.wss.on('connection', (ws, req) => s.#accept(ws, req));
    return s;
  }

  url(path = '/rooms') { return `ws://127.0.0.1:${this.port}${path}`; }

  room(name) {
    if (!this.rooms.has(name)) this.rooms.set(name, { epoch: `e${++this.epochs}`, top: 0, kept: [], members: new Set() });
    return this.rooms.get(name);
  }

  // Publishes as the HTTP API would; returns the offset (or undefined).
  publish(name, data) {
    const r = this.room(name);
    const offset = this.history ? ++r.top : undefined;
    if (this.history) {
      r.kept.push({ offset, data });
      if (r.kept.length > this.historySize) r.kept.shift();
    }
    for (const c of r.members) {
      if (c.hide > 0) { c.hide -= 1; continue; }
      c.send(offset === undefined ? { room: name, data } : { room: name, data, offset });
    }
    return offset;
  }

  // The room's history is lost: a new epoch, offsets from 1 again.
  newEpoch(name) {
    const r = this.room(name);
    Object.assign(r, { epoch: `e${++this.epochs}`, top: 0, kept: [] });
  }

  // Keeps only the last `keep` messages of the room.
  trim(name, keep) { const r = this.room(name); r.kept = r.kept.slice(r.kept.length - keep); }

  // Closes every connection with code (e.g. 4001 "token expired").
  closeAll(code = 1001, reason = 'going away') { for (const c of this.conns) c.ws.close(code, reason); }

  // Drops every connection without a close frame.
  terminateAll() { for (const c of this.conns) c.ws.terminate(); }

  opsOf(kind) { return this.ops.filter((o) => o.op === kind); }

  async stop() {
    this.terminateAll();
    await new Promise((resolve) => this.wss.close(resolve));
  }

  #accept(ws, req) {
    const token = new URL(req.url, 'http://x').searchParams.get('token');
    const conn = {
      ws, user: token ?? '', rooms: new Set(), events: new Set(), hide: 0,
      send: (obj) => { if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(obj)); },
    };
    this.conns.add(conn);
    ws.on('message', (data) => this.#onOp(conn, data.toString()));
    ws.on('close', () => {
      this.conns.delete(conn);
      for (const name of conn.rooms) this.#leave(conn, name);
    });
  }

  #leave(conn, name) {
    const r = this.room(name);
    r.members.delete(conn);
    conn.rooms.delete(name);
    conn.events.delete(name);
    this.#presenceEvent(name, 'leave', conn.user);
  }

  #presenceEvent(name, event, user) {
    for (const c of this.room(name).members)
      if (c.events.has(name)) c.send({ room: name, presence_event: event, user });
  }

  #onOp(conn, text) {
    const op = JSON.parse(text);
    this.ops.push(op);
    if (this.onOp?.(conn, op)) return;
    const withId = (obj) => (op.id === undefined ? obj : { ...obj, id: op.id });
    const answer = (obj) => { if (op.id !== undefined) conn.send(withId(obj)); };
    const r = this.room(op.room);
    switch (op.op) {
      case 'publish': {
        if (op.room.startsWith('forbidden')) return conn.send(withId({ error: `forbidden: ${op.room}` }));
        const offset = this.publish(op.room, op.data);
        return answer(offset === undefined ? { published: op.room } : { published: op.room, offset });
      }
      case 'presence': {
        const count = new Map();
        for (const c of r.members) count.set(c.user, (count.get(c.user) ?? 0) + 1);
        return answer({ presence: op.room, members: [...count].map(([user, connections]) => ({ user, connections })) });
      }
      case 'leave':
        if (conn.rooms.has(op.room)) this.#leave(conn, op.room);
        return answer({ left: op.room });
      case 'join': {
        if (op.room.startsWith('forbidden')) return conn.send(withId({ error: `forbidden: ${op.room}` }));
        if (!conn.rooms.has(op.room)) {
          conn.rooms.add(op.room);
          this.#presenceEvent(op.room, 'join', conn.user);
        }
        if (op.presence_events) conn.events.add(op.room);
        if (!this.history) {
          const a = { joined: op.room, history: false };
          if (op.since) Object.assign(a, { recovered: false, reason: 'history is off' });
          r.members.add(conn);
          return (op.since || op.recover || op.id !== undefined) && conn.send(withId(a));
        }
        const top = { joined: op.room, epoch: r.epoch, offset: r.top };
        if (op.since) {
          const oldest = r.kept.length ? r.kept[0].offset : r.top + 1;
          const n = op.since.offset;
          let reason = null;
          if (op.since.epoch !== r.epoch) reason = 'the room\'s history was lost (new epoch)';
          else if (n > r.top) reason = 'that offset is ahead of the room';
          else if (n + 1 < oldest) reason = 'the history no longer reaches back to that offset';
          if (!reason) for (const m of r.kept) if (m.offset > n) conn.send({ room: op.room, data: m.data, offset: m.offset });
          r.members.add(conn);
          return conn.send(withId(reason ? { ...top, recovered: false, reason } : { ...top, recovered: true }));
        }
        r.members.add(conn);
        if (op.recover) return conn.send(withId(top));
        return answer({ joined: op.room });
      }
      default:
        return conn.send(withId({ error: 'unknown op' }));
    }
  }
}
