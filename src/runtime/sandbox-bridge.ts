/**
 * @module runtime/sandbox-bridge
 * The program run first inside an allow-list sandbox (`node -e SCRIPT CONFIG COMMAND ARGS…`,
 * see sandbox-egress.ts): it opens the listeners of the plan, the DNS stub and a proxy port for
 * proxy-aware clients, then runs COMMAND with stdio passed through and exits with its code.
 * Plain JavaScript, Node built-ins only, because the sandbox sees nothing of Quiver's files.
 * If any listener cannot be opened it exits 126 before COMMAND runs (fail closed).
 *
 * Every connection goes to the proxy's Unix socket as `CONNECT host:port`; the proxy decides.
 * A refused name lookup is reported as `LOOKUP name` (logged by the proxy as denied, port 0).
 */
export const sandboxBridgeScript = `
const net = require('node:net');
const dgram = require('node:dgram');
const fs = require('node:fs');
const { spawn } = require('node:child_process');
const [configPath, command, ...args] = process.argv.slice(1);
const config = JSON.parse(fs.readFileSync(configPath, 'utf8'));
const fail = (message) => { process.stderr.write('quiver egress bridge: ' + message + '\\n'); process.exit(126); };

function tunnel(inbound, target) {
  inbound.pause();
  const outbound = net.connect(config.socket);
  let head = Buffer.alloc(0);
  const onData = (chunk) => {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\\r\\n\\r\\n');
    if (end < 0) return;
    outbound.off('data', onData);
    if (!head.subarray(0, 12).toString('latin1').startsWith('HTTP/1.1 200')) { inbound.destroy(); outbound.destroy(); return; }
    const rest = head.subarray(end + 4);
    if (rest.length > 0) inbound.write(rest);
    inbound.pipe(outbound); outbound.pipe(inbound); inbound.resume();
  };
  outbound.on('data', onData);
  outbound.on('connect', () => outbound.write('CONNECT ' + (target.host.includes(':') ? '[' + target.host + ']' : target.host) + ':' + target.port + ' HTTP/1.1\\r\\n\\r\\n'));
  inbound.on('error', () => outbound.destroy()); outbound.on('error', () => inbound.destroy());
  inbound.on('close', () => outbound.destroy()); outbound.on('close', () => inbound.destroy());
}

// Resolves once the proxy has the report (or after 1 s): the refusal is logged before the
// process sees it. A name reported in the last 10 s is not reported again.
const reported = new Map();
function reportLookup(name) {
  const now = Date.now();
  if ((reported.get(name) || 0) > now - 10000) return Promise.resolve();
  reported.set(name, now);
  return new Promise((resolve) => {
    const socket = net.connect(config.socket);
    const timer = setTimeout(() => socket.destroy(), 1000);
    socket.on('error', () => {});
    socket.on('close', () => { clearTimeout(timer); resolve(); });
    socket.on('connect', () => socket.end('LOOKUP ' + name + ' HTTP/1.1\\r\\n\\r\\n'));
    socket.resume();
  });
}

function dnsAnswer(query) {
  if (query.length < 17) return undefined;
  let offset = 12; const labels = [];
  while (offset < query.length && query[offset] !== 0) {
    const length = query[offset];
    if (length > 63 || offset + 1 + length > query.length) return undefined;
    labels.push(query.subarray(offset + 1, offset + 1 + length).toString('latin1'));
    offset += 1 + length;
  }
  if (offset + 5 > query.length) return undefined;
  const name = labels.join('.').toLowerCase();
  const type = query.readUInt16BE(offset + 1);
  const question = query.subarray(12, offset + 5);
  const address = config.names[name];
  const answer = address !== undefined && type === 1;
  const header = Buffer.alloc(12);
  header.writeUInt16BE(query.readUInt16BE(0), 0);
  header.writeUInt16BE(0x8180 | (query.readUInt16BE(2) & 0x0100) | (address === undefined ? 3 : 0), 2);
  header.writeUInt16BE(1, 4); header.writeUInt16BE(answer ? 1 : 0, 6);
  if (!answer) return { name: address === undefined ? name : undefined, reply: Buffer.concat([header, question]) };
  const record = Buffer.from([0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, ...address.split('.').map(Number)]);
  return { name: undefined, reply: Buffer.concat([header, question, record]) };
}

const listen = (server, port, address) => new Promise((resolve) => {
  server.once('error', (error) => fail('cannot listen on ' + address + ':' + port + ': ' + error.message));
  server.listen(port, address, resolve);
});

(async () => {
  for (const listener of config.listeners) await listen(net.createServer((inbound) => tunnel(inbound, listener.target)), listener.port, listener.address);
  const dns = dgram.createSocket('udp4');
  dns.on('message', async (message, peer) => {
    const answer = dnsAnswer(message);
    if (!answer) return;
    if (answer.name !== undefined) await reportLookup(answer.name);
    dns.send(answer.reply, peer.port, peer.address);
  });
  await new Promise((resolve) => { dns.once('error', (error) => fail('cannot open the DNS stub: ' + error.message)); dns.bind(53, '127.0.0.1', resolve); });
  const proxy = net.createServer((inbound) => {
    const outbound = net.connect(config.socket);
    inbound.pipe(outbound); outbound.pipe(inbound);
    inbound.on('error', () => outbound.destroy()); outbound.on('error', () => inbound.destroy());
  });
  await listen(proxy, 0, '127.0.0.1');
  const url = 'http://127.0.0.1:' + proxy.address().port;
  const env = { ...process.env, HTTPS_PROXY: url, HTTP_PROXY: url, https_proxy: url, http_proxy: url, NO_PROXY: '', no_proxy: '' };
  const child = spawn(command, args, { stdio: 'inherit', env });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('error', (error) => fail('cannot start ' + command + ': ' + error.message));
  child.on('exit', (code, signal) => process.exit(code === null ? 128 : code));
})();
`;
