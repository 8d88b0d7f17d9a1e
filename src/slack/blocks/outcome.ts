/**
 * How an execution's outcome reads in Slack. The engine stores the outcome's sentence plain; a refused
 * forgery (TAMPERED) is raised as an alarm here, in the thread reply, the request card and the audit
 * channel alike.
 */

const ALARM = ":rotating_light: ";

/**
 * The outcome's sentence as Slack shows it: behind the alarm when the request ended TAMPERED (once,
 * also for a sentence stored with it already).
 */
export function outcomeSentence(tampered: boolean, message: string): string {
  return tampered && !message.startsWith(ALARM) ? `${ALARM}${message}` : message;
}
