// framegate rooms demo: one WebSocket to /rooms on the host that served
// this page. Join a room, publish {from, text}, show what the room receives.
// Reconnects with backoff when the connection drops, and joins again.
'use strict';

const $ = (id) => document.getElementById(id);
const ui = {
  state: $('state'), endpoint: $('endpoint'),
  joinForm: $('join-form'), name: $('name'), room: $('room'), join: $('join'), leave: $('leave'),
  membership: $('membership'), roomLabel: $('room-label'),
  messages: $('messages'), empty: $('empty'),
  sendForm: $('send-form'), message: $('message'), send: $('send'),
};

const url = `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}/rooms`;
let ws = null;
let joined = null;  // { name, room } once the user joined
let retryMs = 500;
let retryTimer = 0;

function setState(state, text) {
  ui.state.dataset.state = state;
  ui.state.textContent = text;
  const canSend = state === 'open' && joined !== null;
  ui.message.disabled = !canSend;
  ui.send.disabled = !canSend;
}

function addEntry(kind, from, text) {
  const li = document.createElement('li');
  li.className = kind;
  if (from !== null) {
    const who = document.createElement('span');
    who.className = 'from';
    who.textContent = from;
    li.append(who);
  }
  li.append(document.createTextNode(text));
  const time = document.createElement('time');
  const now = new Date();
  time.dateTime = now.toISOString();
  time.textContent = now.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  li.append(time);
  ui.messages.append(li);
  ui.empty.hidden = true;
  ui.messages.scrollTop = ui.messages.scrollHeight;
}

const note = (text) => addEntry('note', null, text);

function sendOp(op) {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(op));
}

function onMessage(event) {
  let msg;
  try { msg = JSON.parse(event.data); } catch { return note(`Unreadable message: ${event.data}`); }
  if (msg && typeof msg.error === 'string') return addEntry('error', null, `Server: ${msg.error}`);
  if (!msg || !joined || msg.room !== joined.room) return;
  const data = msg.data;
  if (data && typeof data.from === 'string' && typeof data.text === 'string')
    addEntry(data.from === joined.name ? 'mine' : 'theirs', data.from, data.text);
  else
    addEntry('theirs', '(raw)', JSON.stringify(data));
}

function connect() {
  clearTimeout(retryTimer);
  setState('connecting', 'Connecting…');
  ws = new WebSocket(url);
  ws.addEventListener('open', () => {
    retryMs = 500;
    setState('open', 'Connected');
    if (joined) sendOp({ op: 'join', room: joined.room });  // again, after a reconnect
  });
  ws.addEventListener('message', onMessage);
  ws.addEventListener('close', () => {
    ws = null;
    const seconds = Math.round(retryMs / 100) / 10;
    setState('closed', `Disconnected, retrying in ${seconds} s`);
    retryTimer = setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, 8000);
  });
}

function showMembership() {
  const inRoom = joined !== null;
  ui.leave.hidden = !inRoom;
  ui.join.textContent = inRoom ? 'Switch' : 'Join';
  ui.roomLabel.textContent = inRoom ? `in “${joined.room}”` : '';
  ui.membership.textContent = inRoom
    ? `You are ${joined.name} in room “${joined.room}”.`
    : 'Messages go to everyone in the same room, on any gateway of the cluster.';
  setState(ui.state.dataset.state, ui.state.textContent);
}

ui.joinForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const name = ui.name.value.trim();
  const room = ui.room.value.trim();
  if (!name || !room) return;
  if (joined && joined.room !== room) sendOp({ op: 'leave', room: joined.room });
  if (!joined || joined.room !== room) {
    sendOp({ op: 'join', room });
    note(`Joined “${room}” as ${name}.`);
  }
  joined = { name, room };
  try { localStorage.setItem('framegate-demo-name', name); } catch { /* storage may be off */ }
  showMembership();
  if (!ui.message.disabled) ui.message.focus();
});

ui.leave.addEventListener('click', () => {
  if (!joined) return;
  sendOp({ op: 'leave', room: joined.room });
  note(`Left “${joined.room}”.`);
  joined = null;
  showMembership();
});

ui.sendForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const text = ui.message.value.trim();
  if (!text || !joined) return;
  sendOp({ op: 'publish', room: joined.room, data: { from: joined.name, text } });
  ui.message.value = '';
});

const params = new URLSearchParams(location.search);
let savedName = null;
try { savedName = localStorage.getItem('framegate-demo-name'); } catch { /* storage may be off */ }
ui.name.value = params.get('name') ?? savedName ?? '';
if (params.get('room')) ui.room.value = params.get('room');
ui.endpoint.textContent = url;
connect();
