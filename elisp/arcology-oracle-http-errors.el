;;; arcology-oracle-http-errors.el --- How arcology-oracle reports failures -*- lexical-binding: t -*-

;; Copyright (C) 2026 The arcology-oracle authors

;; Author: The arcology-oracle authors
;; URL: https://github.com/arcology-oracle/arcology-oracle

;; This file is not part of GNU Emacs.

;; This program is free software; you can redistribute it and/or modify
;; it under the terms of the GNU General Public License as published by
;; the Free Software Foundation, either version 3 of the License, or
;; (at your option) any later version.

;; This program is distributed in the hope that it will be useful,
;; but WITHOUT ANY WARRANTY; without even the implied warranty of
;; MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
;; GNU General Public License for more details.

;; You should have received a copy of the GNU General Public License
;; along with this program.  If not, see <https://www.gnu.org/licenses/>.

;;; Commentary:

;; The messages that report failures: `arcology-oracle--report' in the
;; echo area (not repeated by automatic refreshes), the guard around
;; callbacks, and the short message a failed response of the daemon, or
;; of a server that is not the daemon, is reported with.

;;; Code:

(require 'subr-x)
(require 'arcology-oracle)
(require 'arcology-oracle-token)

(defvar arcology-oracle--last-report nil
  "The last message shown by `arcology-oracle--report', as (TEXT . TIME).")

(defun arcology-oracle--report (text &optional quiet)
  "Show TEXT in the echo area, prefixed with the package name.
When QUIET (automatic refreshes), a message equal to the previous
one is repeated only after a minute, so that a daemon that is down
does not flood the echo area."
  (let ((now (float-time)))
    (unless (and quiet
                 (equal text (car arcology-oracle--last-report))
                 (< (- now (cdr arcology-oracle--last-report)) 60))
      (setq arcology-oracle--last-report (cons text now))
      (arcology-oracle--message "arcology-oracle: %s" text))))

(defmacro arcology-oracle--guard (&rest body)
  "Run BODY, turning an error into a message.
Used around every callback run from a process filter, sentinel or
timer: errors there must never escape as signals."
  (declare (indent 0) (debug t))
  `(with-demoted-errors "arcology-oracle: %S" ,@body))

(defun arcology-oracle--daemon-error-p (data)
  "Return non-nil when DATA, the parsed body of an error, is the daemon's.
The daemon answers every failed request of the routes this package
calls with the JSON object {\"ok\": false, \"error\": MESSAGE,
\"status\": CODE}; another web server (Ollama, a proxy, a web page)
at `arcology-oracle-url' answers otherwise."
  (and (consp data) (consp (car data))
       (assq 'ok data) (null (alist-get 'ok data))
       (stringp (alist-get 'error data))))

(defun arcology-oracle--not-the-daemon (what)
  "Return the message for a server at `arcology-oracle-url' that is not the daemon.
WHAT says what it answered, for example \"it answered HTTP 404\"."
  (format "no arcology-oracle daemon at %s (%s): check `arcology-oracle-url'"
          (arcology-oracle--base-url) what))

(defun arcology-oracle--content-type (headers)
  "Return the media type of the response HEADERS, lower case, or nil without one."
  (when-let ((value (cdr (assoc "content-type" headers))))
    (downcase (string-trim (car (split-string value ";"))))))

(defun arcology-oracle--error-message (status data _body)
  "Return a short message for an HTTP error STATUS whose body parsed as DATA.
The daemon's own errors (see `arcology-oracle--daemon-error-p') give
their message, or for 401 what to set (and the token is looked up
again at the next request); any other answer means that no daemon
is at `arcology-oracle-url', whatever it sent (a page, text,
nothing), and the message says so.  How much of the daemon's words
is kept: see `arcology-oracle--daemon-words'.  A 409's `retry' is on
the message: see `arcology-oracle--retry-p'; so is
a 503's `missing_model': see `arcology-oracle--missing-model'."
  (if (arcology-oracle--daemon-error-p data)
      (let ((text (arcology-oracle--with-missing-model
                   data
                   (concat
                    (if (= status 401)
                        (prog1 (arcology-oracle--unauthorized-message) (arcology-oracle--token-refused))
                      (arcology-oracle--daemon-words status data))
                    (format " (HTTP %d)" status)))))
        (if (and (= status 409) (assq 'retry data))
            (propertize text 'arcology-oracle-retry (if (alist-get 'retry data) 'yes 'no))
          text))
    (arcology-oracle--not-the-daemon
     (format "it answered HTTP %d%s" status
             (if (memq status '(502 503 504))
                 ", as a proxy does when nothing answers behind it"
               "")))))

(defun arcology-oracle--daemon-words (status data)
  "Return the daemon's error message in DATA, of HTTP STATUS, on one line.
Cut at 160 characters, unless it says what the user must do: a
409's whole explanation (why the request was refused is its end) is
cut at 400, and one naming the model Ollama lacks (`missing_model':
its end is the command that pulls it, however long the host and the
model's name) is never cut."
  (let ((words (replace-regexp-in-string "[\n\r]+" " " (alist-get 'error data))))
    (if (arcology-oracle--missing-model (arcology-oracle--with-missing-model data words))
        words
      (truncate-string-to-width words (if (= status 409) 400 160) nil nil "…"))))

(defun arcology-oracle--with-missing-model (data message)
  "Return MESSAGE marked with the model that Ollama lacks, named in DATA.
DATA is the daemon's error body or the `error' event of its stream:
its `missing_model' names the chat model that Ollama does not have
\(the message says so in words, for people).  Without it, MESSAGE as
it is."
  (let ((model (alist-get 'missing_model data)))
    (if (and (stringp model) (not (string-empty-p model)) (not (string-empty-p message)))
        (propertize message 'arcology-oracle-missing-model model)
      message)))

(defun arcology-oracle--missing-model (message)
  "Return the chat model Ollama lacks, by the failure MESSAGE; nil if none.
Set by `arcology-oracle--with-missing-model' from the daemon's
`missing_model', never read from the words."
  (and (stringp message) (not (string-empty-p message))
       (get-text-property 0 'arcology-oracle-missing-model message)))

(defun arcology-oracle--retry-p (message)
  "Return whether the failure MESSAGE can go away by itself.
`yes' for a 409 of the daemon saying that the same request can
succeed in a moment (the note is held by another program), `no' for
one saying that it never will (the capture was edited), nil for any
other failure."
  (and (stringp message) (> (length message) 0)
       (get-text-property 0 'arcology-oracle-retry message)))

(defun arcology-oracle--refusal (what message &optional again)
  "Return the message saying WHAT was not done, for the failure MESSAGE.
WHAT is a sentence without its end, such as \"Nothing forgotten\".
By the 409's `retry' (see `arcology-oracle--retry-p'): `yes' says
WHAT \"yet\" and that the same request can succeed in a moment,
once: AGAIN (the keys that try again, from `substitute-command-keys')
goes where the daemon's words already say to try or ask again, else
it is offered before them; `no' says that trying again will not
change that; any other failure reads \"WHAT: MESSAGE\"."
  (pcase (arcology-oracle--retry-p message)
    ('yes
     (cond ((string-match "\\`.*\\(\\<\\(?:try\\|ask\\) again\\>\\)" message)
            (concat what " yet: " (substring message 0 (match-end 1))
                    (if again (concat " with " again) "")
                    (substring message (match-end 1))))
           (again (format "%s yet (%s tries again in a moment): %s" what again message))
           (t (concat what " yet (try again in a moment): " message))))
    ('no (concat what ", and trying again will not change that: " message))
    (_ (concat what ": " message))))

(provide 'arcology-oracle-http-errors)

;;; arcology-oracle-http-errors.el ends here
