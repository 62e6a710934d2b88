import { connect } from 'node:net';

/**
 * True when something answers PING with +PONG on host:port within a second. A plain socket:
 * an ioredis probe would leave a reconnect timer behind.
 */
export function redisAnswers(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect(port, host);
    const finish = (ok: boolean) => {
      socket.destroy();
      done(ok);
    };
    socket.setTimeout(1000, () => finish(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => finish(data.toString().startsWith('+PONG')));
    socket.once('error', () => finish(false));
  });
}
