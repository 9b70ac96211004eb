/**
 * Sign-in with a phone number and a one-time code (POST /v1/auth/otp/request, then /verify).
 */
import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { requestCode, toApiError, verifyCode } from '../client';
import { ErrorNotice, fieldMessages } from '../components/ErrorNotice';
import { getSignOutReason } from '../session';

const PHONE = /^\+994\d{9}$/;

export function SignIn() {
  const [step, setStep] = useState<'phone' | 'code'>('phone');
  const [phone, setPhone] = useState('+994');
  const [code, setCode] = useState('');
  const [resendIn, setResendIn] = useState(0);
  const [phoneHint, setPhoneHint] = useState<string | null>(null);
  const phoneId = useId();
  const codeId = useId();
  const heading = useRef<HTMLHeadingElement>(null);
  const codeInput = useRef<HTMLInputElement>(null);
  const expired = getSignOutReason() === 'expired';

  const send = useMutation({
    mutationFn: (to: string) => requestCode(to),
    onSuccess: (answer) => {
      setResendIn(answer.resendAfterSec);
      setStep('code');
      setCode('');
    },
  });
  const verify = useMutation({ mutationFn: () => verifyCode(phone, code) });
  const sendError = send.error && toApiError(send.error);

  useEffect(() => {
    if (resendIn <= 0) return;
    const t = setTimeout(() => setResendIn((s) => s - 1), 1000);
    return () => clearTimeout(t);
  }, [resendIn]);

  useEffect(() => {
    if (step === 'code') codeInput.current?.focus();
  }, [step]);

  const submitPhone = (event: FormEvent) => {
    event.preventDefault();
    const trimmed = phone.replace(/\s+/g, '');
    setPhone(trimmed);
    if (!PHONE.test(trimmed)) {
      setPhoneHint('Enter the number as +994 followed by 9 digits, for example +994501234567.');
      return;
    }
    setPhoneHint(null);
    send.mutate(trimmed);
  };

  const submitCode = (event: FormEvent) => {
    event.preventDefault();
    verify.mutate();
  };

  const phoneErrors = [...(phoneHint ? [phoneHint] : []), ...fieldMessages(sendError, 'phone')];
  const retryAfter = (sendError?.details as { retryAfterSec?: number } | undefined)?.retryAfterSec;

  return (
    <main id="main" className="signin">
      <div className="card signin-card">
        <p className="brand">Partner developer portal</p>
        <h1 ref={heading} tabIndex={-1}>
          Sign in
        </h1>
        {expired && (
          <p className="notice notice-info" role="status">
            Your session has ended. Please sign in again.
          </p>
        )}
        {step === 'phone' ? (
          <form onSubmit={submitPhone} noValidate>
            <label htmlFor={phoneId}>Phone number</label>
            <input
              id={phoneId}
              type="tel"
              inputMode="tel"
              autoComplete="tel"
              value={phone}
              onChange={(e) => setPhone(e.target.value)}
              aria-invalid={phoneErrors.length > 0}
              aria-describedby={`${phoneId}-hint`}
              required
            />
            <p id={`${phoneId}-hint`} className={phoneErrors.length ? 'field-error' : 'hint'}>
              {phoneErrors.length
                ? phoneErrors.join(' ')
                : 'The phone of your partner account, e.g. +994501234567. We text you a 6-digit code.'}
            </p>
            {/* The wait is said once, in plain words; the API's own sentence would repeat it. */}
            {retryAfter !== undefined ? (
              <p className="field-error" role="alert" data-testid="otp-wait">
                Too many codes were asked for this number. You can ask again in {retryAfter} s.
              </p>
            ) : (
              <ErrorNotice error={sendError && sendError.fieldErrors.length === 0 ? sendError : null} />
            )}
            <button type="submit" className="primary" disabled={send.isPending}>
              {send.isPending ? 'Sending…' : 'Send code'}
            </button>
          </form>
        ) : (
          <form onSubmit={submitCode} noValidate>
            <p>
              We sent a 6-digit code to <strong>{phone}</strong>.
            </p>
            <label htmlFor={codeId}>One-time code</label>
            <input
              id={codeId}
              ref={codeInput}
              inputMode="numeric"
              autoComplete="one-time-code"
              pattern="\d{6}"
              maxLength={6}
              value={code}
              onChange={(e) => setCode(e.target.value.replace(/\D/g, ''))}
              aria-invalid={Boolean(verify.error)}
              className="mono code-input"
              required
            />
            <ErrorNotice error={verify.error} />
            <ErrorNotice error={send.error} />
            <button type="submit" className="primary" disabled={verify.isPending || code.length !== 6}>
              {verify.isPending ? 'Signing in…' : 'Sign in'}
            </button>
            <div className="row">
              <button type="button" className="link" disabled={resendIn > 0 || send.isPending} onClick={() => send.mutate(phone)}>
                {resendIn > 0 ? `Resend code in ${resendIn} s` : 'Resend code'}
              </button>
              <button
                type="button"
                className="link"
                onClick={() => {
                  setStep('phone');
                  verify.reset();
                }}
              >
                Use another number
              </button>
            </div>
          </form>
        )}
      </div>
    </main>
  );
}
