// A real SMTP server on loopback that keeps every message it receives, so tests read sign-in codes from real mail.
import type { AddressInfo } from 'node:net'
import { SMTPServer } from 'smtp-server'

export interface ReceivedMail {
  to: string[]
  raw: string
}

export interface SmtpInbox {
  url: string
  messages: ReceivedMail[]
  /** While true, every message is refused with 451 (try later), as a mail server out of space or overloaded does. */
  refusing: boolean
  /** The code of the next mail to `to` not taken yet; waits for it to arrive. */
  nextCode(to: string, timeoutMs?: number): Promise<string>
  close(): Promise<void>
}

export async function startSmtpInbox(): Promise<SmtpInbox> {
  const messages: ReceivedMail[] = []
  const taken = new Set<ReceivedMail>()
  const server = new SMTPServer({
    authOptional: true,
    // Plain SMTP on loopback: no certificate for nodemailer to reject.
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        if (inbox.refusing) {
          return callback(Object.assign(new Error('Try again later'), { responseCode: 451 }))
        }
        messages.push({
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address.toLowerCase()),
          raw: Buffer.concat(chunks).toString('utf8'),
        })
        callback()
      })
    },
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.server.address() as AddressInfo

  const inbox: SmtpInbox = {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    refusing: false,
    async nextCode(to, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs
      while (Date.now() < deadline) {
        const mail = messages.find((message) => !taken.has(message) && message.to.includes(to.toLowerCase()))
        if (mail) {
          taken.add(mail)
          const match = /sign-in code is (\d{6})\b/.exec(mail.raw)
          if (!match) throw new Error('the mail carries no code')
          return match[1]!
        }
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      throw new Error(`no mail to ${to} within ${timeoutMs} ms`)
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
  return inbox
}
