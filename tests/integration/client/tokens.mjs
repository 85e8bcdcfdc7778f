// HS256 tokens for the tests that start gateways with --jwt-secret-file
// (docs/AUTH.md): a fresh secret in a 0600 file, and tokens signed with it.
import { createHmac, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const b64url = (buf) => Buffer.from(buf).toString('base64url');

// Writes a 48-byte secret (as hex) to dir/jwt-secret; returns { file, sign }.
// sign(claims) is a token for claims ({ sub, exp, rooms, ... }; exp in
// seconds since the epoch, default an hour from now).
export function hs256Secret(dir) {
  const secret = randomBytes(48).toString('hex');
  const file = join(dir, 'jwt-secret');
  writeFileSync(file, secret, { mode: 0o600 });
  const sign = (claims) => {
    const header = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
    const payload = b64url(JSON.stringify({ exp: Math.floor(Date.now() / 1000) + 3600, ...claims }));
    const sig = b64url(createHmac('sha256', secret).update(`${header}.${payload}`).digest());
    return `${header}.${payload}.${sig}`;
  };
  return { file, sign };
}
