import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { clientErrorWarnings } from './http-metrics';

/**
 * Fastify's `clientErrorHandler`: Node refuses what it cannot parse as a request (headers over
 * its limit, a request that timed out, a malformed request line) before Fastify or Nest see it,
 * so no filter runs. The answer is the API's error body all the same, as Fastify's default
 * handler does it otherwise: written straight to the socket, which is then closed. There is no
 * request id: no request was made.
 */
export function sendClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, path, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [
          431,
          'HEADERS_TOO_LARGE',
          'headers',
          `the request's headers exceed ${maxHeaderSize} bytes (Node's --max-http-header-size)`,
        ]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'REQUEST_TIMEOUT', 'request', 'the request did not arrive in time']
        : [
            400,
            'MALFORMED_REQUEST',
            'request',
            `not an HTTP request (${error.code ?? error.message})`,
          ];
  clientErrorWarnings.warn(
    `client error from ${socket.remoteAddress}: ${status} ${code} ${message}`,
  );
  if (socket.writable) {
    const body = JSON.stringify({ code, message, details: [{ path, message }] });
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
