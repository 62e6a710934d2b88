/**
 * The race at a shutdown that a kept-alive caller loses when the server closes its idle
 * connections at once: its next request is already on the wire (or in the socket's buffer, unread
 * while the event loop was busy) when the server destroys the socket, and the caller gets a reset
 * instead of an answer. Played here over a raw socket: one request answered with keep-alive, then
 * the shutdown begins and the next request is written in the same turn.
 */
import 'reflect-metadata';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { connect, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { DrainingFastifyAdapter } from './draining-fastify-adapter';

@Controller()
class PingController {
  @Get('ping')
  ping() {
    return 'pong';
  }
}

@Module({ controllers: [PingController] })
class PingModule {}

const REQUEST = 'GET /ping HTTP/1.1\r\nhost: localhost\r\n\r\n';

/** Everything the server sends on `socket` until it ends, or how it ended otherwise. */
function readUntilEnd(socket: Socket): Promise<{ text: string; error?: string }> {
  return new Promise((done) => {
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('error', (error: NodeJS.ErrnoException) => done({ text, error: error.code }));
    socket.on('close', () => done({ text }));
  });
}

/** The first response on `socket` (an answer of this server fits one read). */
const firstResponse = (socket: Socket) =>
  new Promise<string>((done) => socket.once('data', (chunk) => done(chunk.toString())));

async function start(idleGraceMs: number) {
  const adapter = new DrainingFastifyAdapter({}, idleGraceMs);
  const app = await NestFactory.create<NestFastifyApplication>(PingModule, adapter, {
    logger: false,
  });
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as { port: number };
  const socket = connect(port, '127.0.0.1');
  socket.write(REQUEST);
  expect(await firstResponse(socket)).toMatch(/^HTTP\/1\.1 200[\s\S]*keep-alive[\s\S]*pong$/);
  return { app, socket };
}

describe('DrainingFastifyAdapter at shutdown', () => {
  it('answers a request sent on a kept-alive connection as the shutdown begins, then closes it', async () => {
    const { app, socket } = await start(500);
    const ended = readUntilEnd(socket);
    const closed = app.close();
    socket.write(REQUEST);
    const { text, error } = await ended;
    expect(error).toBeUndefined();
    expect(text).toMatch(/^HTTP\/1\.1 200/);
    expect(text).toMatch(/\r\nconnection: close\r\n/i);
    expect(text).toMatch(/pong$/);
    await closed;
  });

  it('closes an idle connection once the grace is over, and the app with it', async () => {
    const { app, socket } = await start(300);
    const ended = readUntilEnd(socket);
    const began = Date.now();
    await app.close();
    expect(Date.now() - began).toBeGreaterThanOrEqual(290);
    expect(await ended).toEqual({ text: '' });
  });

  it('closes at once when no connection is open', async () => {
    const { app, socket } = await start(5000);
    socket.destroy();
    // Until the server has seen the client go (its callback comes in a tick: wait a turn too).
    for (let open = 1; open > 0; await sleep(5)) {
      open = await new Promise<number>((done) =>
        app.getHttpServer().getConnections((_error, count) => done(count)),
      );
    }
    const began = Date.now();
    await app.close();
    expect(Date.now() - began).toBeLessThan(1000);
  });

  it('with no grace, the request is reset: the race this adapter closes', async () => {
    const { app, socket } = await start(0);
    const ended = readUntilEnd(socket);
    const closed = app.close();
    socket.write(REQUEST);
    const { text } = await ended;
    expect(text).toBe('');
    await closed;
  });
});
