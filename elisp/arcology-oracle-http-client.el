;;; arcology-oracle-http-client.el --- Non-blocking HTTP client of the arcology-oracle daemon -*- lexical-binding: t -*-

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

;; How arcology-oracle talks to its daemon: one small HTTP/1.1 client
;; on `open-network-stream' that never blocks.  It sends a request
;; (with a JSON body, if any), passes on the body as it arrives and
;; ends each request exactly once: done, failed or cancelled.  The
;; JSON and NDJSON requests the rest of the package makes are
;; arcology-oracle-http.el's, on top of it.  The token is
;; arcology-oracle-token.el's, the response parser
;; arcology-oracle-http-parse.el's, the failure messages
;; arcology-oracle-http-errors.el's.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'url-parse)
(require 'url-util)
(require 'json)
(require 'arcology-oracle)
(require 'arcology-oracle-token)
(require 'arcology-oracle-instance)
(require 'arcology-oracle-http-parse)
(require 'arcology-oracle-http-errors)

(defun arcology-oracle--json-encode (value)
  "Return VALUE (an alist) as JSON text, UTF-8 encoded."
  (encode-coding-string (json-encode value) 'utf-8))

;;; HTTP client

;; One small HTTP/1.1 client on `open-network-stream' serves every
;; request, JSON and streamed alike: it never blocks (connecting is
;; asynchronous too, with :nowait), decodes chunked bodies as they
;; arrive, enforces a silence timeout, and can be cancelled by deleting
;; its process.  `url-retrieve' offers none of the streaming, reports
;; some failures synchronously and keeps global state in dynamic
;; variables, so it is not used.

(defun arcology-oracle--http-unreachable (req message)
  "End REQ with MESSAGE: the daemon could not be reached.
MESSAGE gets how to start the daemon, here once for every command
\(each shows it as it is: the echo area, a list, an answer's entry).
See `arcology-oracle--unreachable-functions'; one that signals is
shown in the echo area, and REQ ends all the same."
  (condition-case err
      (run-hook-with-args 'arcology-oracle--unreachable-functions (arcology-oracle--http-base req))
    (error (arcology-oracle--message "arcology-oracle: %s" (error-message-string err))))
  (arcology-oracle--http-finish
   req (propertize (concat message ": start it (arcology-oracle serve)") 'arcology-oracle-unreachable t)))

(defun arcology-oracle--http-finish (req &optional error-message)
  "End REQ once: stop its timer and process, then run its callback.
With ERROR-MESSAGE, call the on-error callback with it, else the
on-done callback with status, headers and collected body."
  (unless (arcology-oracle--http-finished req)
    (setf (arcology-oracle--http-finished req) t)
    (when (arcology-oracle--http-timer req)
      (cancel-timer (arcology-oracle--http-timer req)))
    (let ((proc (arcology-oracle--http-process req)))
      (when (process-live-p proc) (delete-process proc)))
    (arcology-oracle--http-run-callback req error-message)))

(defun arcology-oracle--http-run-callback (req error-message)
  "Run the callback of the finished REQ, given ERROR-MESSAGE or not.
See `arcology-oracle--http-finish'.  Not while org-roam waits for
its database to answer: Emacs runs process filters and timers
during that wait, and a callback that asks the database then (a
list's backlinks, the org-roam buffer rendered again) mixed its
answer up with the waiting query's, so org-roam's own render
failed.  Nor while org-roam renders its buffer (something in it
may wait, a passphrase prompt say): rendering it again then would
erase what the outer render is writing.  It is run from a timer
once that is over."
  (if (arcology-oracle--in-org-roam-p)
      (run-at-time 0.05 nil #'arcology-oracle--http-run-callback req error-message)
    (arcology-oracle--guard
      (if error-message
          (when (arcology-oracle--http-on-error req)
            (funcall (arcology-oracle--http-on-error req)
                     (propertize error-message 'arcology-oracle-unanswered t)))
        (when (arcology-oracle--http-on-done req)
          (funcall (arcology-oracle--http-on-done req)
                   (arcology-oracle--http-status req)
                   (arcology-oracle--http-headers req)
                   (apply #'concat (reverse (arcology-oracle--http-body-parts req)))))))))

(defun arcology-oracle--in-org-roam-p ()
  "Return non-nil when org-roam is querying its database or rendering its buffer.
That is, when `emacsql' (which org-roam's queries go through,
waiting for the database's answer) or
`org-roam-buffer-render-contents' is on the stack."
  (catch 'found
    (mapbacktrace (lambda (_evald function _args _flags)
                    (when (memq function '(emacsql org-roam-buffer-render-contents))
                      (throw 'found t))))
    nil))

(defun arcology-oracle--unanswered-p (message)
  "Return non-nil when MESSAGE is that the daemon did not answer.
It could not be reached, broke the connection or stayed silent:
asked again later, it may answer.  An answer of the daemon's (an
HTTP error, say) would be the same again."
  (and (stringp message) (not (string-empty-p message))
       (get-text-property 0 'arcology-oracle-unanswered message)))

(defun arcology-oracle--unreachable-p (message)
  "Return non-nil when MESSAGE is that the daemon could not be reached at all.
Nothing was sent: it is not running (or not at `arcology-oracle-url')."
  (and (arcology-oracle--unanswered-p message)
       (get-text-property 0 'arcology-oracle-unreachable message)))

(defun arcology-oracle--http-opened (req)
  "Note that REQ's connection is open: from now on only silence counts."
  (unless (arcology-oracle--http-connected req)
    (setf (arcology-oracle--http-connected req) t
          (arcology-oracle--http-last-activity req) (float-time))))

(defun arcology-oracle--http-filter (req bytes)
  "Process filter of REQ: parse BYTES, pass on body data, finish when complete."
  (unless (arcology-oracle--http-finished req)
    (arcology-oracle--http-opened req)
    (setf (arcology-oracle--http-last-activity req) (float-time))
    (let ((data (condition-case err
                    (arcology-oracle--http-feed req bytes)
                  (error (arcology-oracle--http-finish
                          req (format "bad response from the daemon (%s)"
                                      (error-message-string err)))
                         nil))))
      (when (and data (not (string-empty-p data)))
        (if (and (arcology-oracle--http-on-data req) (arcology-oracle--http-ok-p req))
            (arcology-oracle--guard (funcall (arcology-oracle--http-on-data req) data))
          (push data (arcology-oracle--http-body-parts req))))
      (when (eq (arcology-oracle--http-state req) 'done)
        (arcology-oracle--http-finish req)))))

(defun arcology-oracle--describe-failure (event)
  "Return a short reason for the network process EVENT string."
  (let ((event (string-trim event)))
    (cond ((string-match-p "code 111\\b\\|refused" event) "connection refused")
          ((string-match-p "code 113\\b\\|unreachable" event) "host unreachable")
          ((string-match-p "code 110\\b\\|timed out" event) "connection timed out")
          (t event))))

(defun arcology-oracle--http-sentinel (req request-bytes event)
  "Process sentinel of REQ: send REQUEST-BYTES once open, handle EVENT."
  (unless (arcology-oracle--http-finished req)
    (let ((proc (arcology-oracle--http-process req)))
      (cond
       ((string-prefix-p "open" event)
        (arcology-oracle--http-opened req)
        (condition-case err
            (process-send-string proc request-bytes)
          (error (arcology-oracle--http-finish
                  req (format "cannot send to the daemon (%s)" (error-message-string err))))))
       ((and (eq (arcology-oracle--http-state req) 'body)
             (null (arcology-oracle--http-remaining req)))
        ;; A body framed by the end of the connection is complete now.
        (arcology-oracle--http-finish req))
       ((arcology-oracle--http-status req)
        (arcology-oracle--http-finish
         req (propertize "the daemon went away mid-answer (it closed the connection)"
                         'arcology-oracle-mid-answer t)))
       ;; Sent, then closed unanswered: the daemon was reached (killed or restarted since).
       ((arcology-oracle--http-connected req)
        (arcology-oracle--http-finish req "the daemon went away before answering (it closed the connection)"))
       (t
        (arcology-oracle--http-unreachable
         req (format "daemon not reachable at %s (%s)" (arcology-oracle--http-base req)
                     (arcology-oracle--describe-failure event))))))))

(defun arcology-oracle--http-watchdog (req)
  "Fail REQ when it waited too long: to connect, or for the daemon to speak.
A connection that is not open after REQ's connect timeout fails
as unreachable (a host that drops packets: the system would try for
minutes); an open one fails after its timeout of silence."
  (unless (arcology-oracle--http-finished req)
    (let* ((connected (arcology-oracle--http-connected req))
           (timeout (if connected
                        (arcology-oracle--http-timeout req)
                      (arcology-oracle--http-connect-timeout req)))
           (left (- (+ (arcology-oracle--http-last-activity req) timeout) (float-time))))
      (cond
       ((> left 0)
        (setf (arcology-oracle--http-timer req)
              (run-at-time left nil #'arcology-oracle--http-watchdog req)))
       (connected
        (arcology-oracle--http-finish
         req (format "no answer from the daemon within %s seconds" timeout)))
       (t
        (arcology-oracle--http-unreachable
         req (format "daemon not reachable at %s (no connection within %s seconds)"
                     (arcology-oracle--http-base req) timeout)))))))

(cl-defun arcology-oracle--http-request (method path &key query json accept timeout
                                                on-data on-done on-error)
  "Send an HTTP request to the daemon without waiting; return its state.
METHOD is \"GET\" or \"POST\"; PATH starts with a slash and is
appended to `arcology-oracle-url'.  QUERY is a list of (NAME VALUE)
lists for the query string; JSON an alist sent as the JSON body.
ACCEPT is the Accept header; TIMEOUT the seconds of silence
tolerated (default `arcology-oracle-timeout').  The connection must
open within the smaller of TIMEOUT and `arcology-oracle-timeout'.

ON-DATA, when given, receives each piece of a successful (2xx)
body as raw bytes as soon as it arrives.  Exactly one of ON-DONE
and ON-ERROR is then called, always later (never before this
function returns):

- ON-DONE with STATUS (an integer), HEADERS (an alist of lowercase
  names to values) and BODY (the raw bytes, unibyte; without the
  parts given to ON-DATA) when a response, of any status, arrived
  in full;
- ON-ERROR with a short message when the daemon could not be
  reached (refused, or no connection in time), broke the connection
  or stayed silent too long.  That message satisfies
  `arcology-oracle--unanswered-p', whichever callback it reaches.

Errors signalled by the callbacks become messages.  Cancel the
request with `arcology-oracle--http-cancel'."
  (let* ((base (arcology-oracle--base-url))
         (url (url-generic-parse-url base))
         (tls (equal (url-type url) "https"))
         (host (url-host url))
         (port (url-port url))
         (prefix (string-remove-suffix "/" (or (car (url-path-and-query url)) "")))
         (target (concat prefix path
                         (if query (concat "?" (url-build-query-string query)) "")))
         (body (and json (arcology-oracle--json-encode json)))
         (token (arcology-oracle-auth-token))
         (head (concat method " " target " HTTP/1.1\r\n"
                       "Host: " host
                       (if (= port (if tls 443 80)) "" (format ":%d" port)) "\r\n"
                       "User-Agent: arcology-oracle.el\r\n"
                       "Accept: " (or accept "application/json") "\r\n"
                       "Connection: close\r\n"
                       (if token (concat "Authorization: Bearer " token "\r\n") "")
                       (if-let ((notes (cdr (assoc base arcology-oracle--daemon-notes))))
                           (concat "X-Arcology-Oracle-Notes: " (url-hexify-string notes) "\r\n")
                         "")
                       (if body
                           (format "Content-Type: application/json\r\nContent-Length: %d\r\n"
                                   (length body))
                         "")
                       "\r\n"))
         (bytes (concat (encode-coding-string head 'utf-8) body))
         (timeout (or timeout arcology-oracle-timeout))
         (req (arcology-oracle--http-create
               :timeout timeout :base base
               :connect-timeout (min timeout arcology-oracle-timeout)
               :on-data on-data :on-done on-done :on-error on-error)))
    (condition-case err
        (let ((proc (open-network-stream
                     "arcology-oracle" nil host port
                     :type (if tls 'tls 'plain) :nowait t :coding 'binary)))
          (setf (arcology-oracle--http-process req) proc)
          (set-process-query-on-exit-flag proc nil)
          (set-process-filter proc (lambda (_proc string)
                                     (arcology-oracle--http-filter req string)))
          (set-process-sentinel proc (lambda (_proc event)
                                       (arcology-oracle--http-sentinel req bytes event)))
          ;; Some connections are open at once, without an "open" event.
          (when (eq (process-status proc) 'open)
            (arcology-oracle--http-opened req)
            (process-send-string proc bytes))
          (setf (arcology-oracle--http-timer req)
                (run-at-time (if (arcology-oracle--http-connected req)
                                 (arcology-oracle--http-timeout req)
                               (arcology-oracle--http-connect-timeout req))
                             nil #'arcology-oracle--http-watchdog req)))
      (error
       (run-at-time 0 nil #'arcology-oracle--http-unreachable req
                    (format "daemon not reachable at %s (%s)" base
                            (error-message-string err)))))
    req))

(defun arcology-oracle--http-cancel (req)
  "Abandon REQ: close its connection; none of its callbacks will run."
  (when (and req (not (arcology-oracle--http-finished req)))
    (setf (arcology-oracle--http-finished req) t)
    (when (arcology-oracle--http-timer req)
      (cancel-timer (arcology-oracle--http-timer req)))
    (let ((proc (arcology-oracle--http-process req)))
      (when (process-live-p proc) (delete-process proc)))))

(provide 'arcology-oracle-http-client)

;;; arcology-oracle-http-client.el ends here
