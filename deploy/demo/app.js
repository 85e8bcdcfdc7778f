// framegate rooms demo: the client library (framegate.js, a copy of
// clients/js/framegate.js) on /rooms of the host that served this page.
// Join a room, publish {from, text}, show what the room receives: each
// message once and in order, with what a dropped connection missed
// recovered from the room's history. A token (the Token field, or ?token=
// in this page's address) is sent when the gateway asks for one.
import { FramegateClient } from './framegate.js';

const $ = (id) => document.getElementById(id);
const ui = {
  state: $('state'), endpoint: $('endpoint'),
  joinForm: $('join-form'), name: $('name'), room: $('room'), token: $('token'), join: $('join'), leave: $('leave'),
  membership: $('membership'), roomLabel: $('room-label'),
  messages: $('messages'), empty: $('empty'),
  sendForm: $('send-form'), message: $('message'), send: $('send'),
};

const url = `${location.protocol === 'https:' ? 'wss:' : 'ws:'}//${location.host}/rooms`;
let joined = null;  // { name, room } once the user joined
let usedToken = '';

// The library's states shown with the demo's three colours.
function setState(state, text) {
  ui.state.dataset.state = state;
  ui.state.textContent = text;
  const canSend = state === 'open' && joined !== null;
  ui.message.disabled = !canSend;
  ui.send.disabled = !canSend;
}

function addEntry(kind, from, text, offset) {
  const li = document.createElement('li');
  li.className = kind;
  if (offset !== undefined) li.dataset.offset = String(offset);
  if (from !== null) {
    const who = document.createElement('span');
    who.className = 'from';
    who.textContent = from;
    li.append(who);
  }
  const body = document.createElement('span');
  body.className = 'text';
  body.textContent = text;
  li.append(body);
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

function onMessage(data, { offset }) {
  if (data && typeof data.from === 'string' && typeof data.text === 'string')
    addEntry(data.from === joined?.name ? 'mine' : 'theirs', data.from, data.text, offset);
  else
    addEntry('theirs', '(raw)', JSON.stringify(data), offset);
}

const client = new FramegateClient(url, {
  getToken: () => { usedToken = ui.token.value.trim(); return usedToken; },
});
client.on('connecting', () => setState('connecting', 'Connecting…'));
client.on('open', () => setState('open', 'Connected'));
client.on('reconnecting', ({ delay }) =>
  setState('closed', `Disconnected, retrying in ${Math.round(delay / 100) / 10} s`));
client.on('unrecovered', ({ room, reason }) => note(`Some messages of “${room}” could not be recovered: ${reason}.`));
client.on('error', (e) => { if (e.code === 'server') addEntry('error', null, `Server: ${e.message}`); });

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

function leaveRoom() {
  client.leave(joined.room).catch(() => {});
  note(`Left “${joined.room}”.`);
  joined = null;
}

ui.joinForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const name = ui.name.value.trim();
  const room = ui.room.value.trim();
  if (!name || !room) return;
  if (ui.token.value.trim() !== usedToken) client.reconnect();  // logged in (or out)
  if (joined && joined.room !== room) leaveRoom();
  if (!joined) {
    client.join(room, { onMessage }).catch((e) => {
      addEntry('error', null, `Server: ${e.message}`);
      if (joined?.room === room) { joined = null; showMembership(); }
    });
    note(`Joined “${room}” as ${name}.`);
  }
  joined = { name, room };
  try { localStorage.setItem('framegate-demo-name', name); } catch { /* storage may be off */ }
  showMembership();
  if (!ui.message.disabled) ui.message.focus();
});

ui.leave.addEventListener('click', () => {
  if (!joined) return;
  leaveRoom();
  showMembership();
});

ui.sendForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const text = ui.message.value.trim();
  if (!text || !joined) return;
  client.publish(joined.room, { from: joined.name, text })
    .catch((e) => addEntry('error', null, e.code === 'server' ? `Server: ${e.message}` : `Maybe not sent: ${e.message}`));
  ui.message.value = '';
});

const params = new URLSearchParams(location.search);
let savedName = null;
try { savedName = localStorage.getItem('framegate-demo-name'); } catch { /* storage may be off */ }
ui.name.value = params.get('name') ?? savedName ?? '';
if (params.get('room')) ui.room.value = params.get('room');
if (params.get('token')) ui.token.value = params.get('token');
ui.endpoint.textContent = url;
// For scripts and tests driving the page.
window.framegateDemo = { client };
client.connect();
