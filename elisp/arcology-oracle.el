;;; arcology-oracle.el --- Similar notes, questions and conversations over org-roam -*- lexical-binding: t -*-

;; Copyright (C) 2026 The arcology-oracle authors

;; Author: The arcology-oracle authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (org "9.5"))
;; Keywords: outlines, hypermedia, convenience
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

;; The Emacs client of the arcology-oracle daemon, which indexes an
;; org-roam directory heading by heading and answers over HTTP.
;;
;; - `arcology-oracle-similar-mode' keeps a side window listing the
;;   notes similar to the heading at point.
;; - `arcology-oracle-similar-section' shows the same list in the
;;   org-roam buffer: add it to `org-roam-mode-sections'.
;; - `arcology-oracle-ask' and `arcology-oracle-ask-region' ask a
;;   question about the current buffer; the answer streams into an
;;   org buffer, followed by its sources as id: links.
;; - `arcology-oracle-summarize' summarizes the node at point.
;; - `arcology-oracle-converse' answers the conversation subtree at
;;   point with a new heading; `arcology-oracle-discard' removes it.
;; - `arcology-oracle-search' offers search results through
;;   `completing-read'.
;; - `arcology-oracle-gptel-backend' points gptel at the daemon.
;;
;; Every request is asynchronous: nothing here waits for the daemon.
;; When the daemon is down or answers with an error, a short message
;; appears in the echo area.  The daemon's lifecycle belongs to systemd
;; (or whatever runs it), not to Emacs.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'org)
(require 'org-element)
(require 'url-parse)
(require 'url-util)
(require 'auth-source)
(require 'json)

;; Optional libraries: org-roam (visiting by ID, the org-roam section),
;; magit-section (the org-roam section) and gptel.  None is required.
(eval-when-compile (require 'magit-section nil t))

(declare-function org-roam-node-id "ext:org-roam-node" (node) t)
(declare-function org-roam-node-file "ext:org-roam-node" (node) t)
(declare-function org-roam-node-point "ext:org-roam-node" (node) t)
(declare-function org-roam-node-from-id "ext:org-roam-node" (id))
(declare-function org-roam-buffer-render-contents "ext:org-roam-mode" ())
(declare-function magit-insert-heading "ext:magit-section" (&rest args))
(declare-function magit-section-show "ext:magit-section" (section))
(declare-function magit-insert-child-count "ext:magit-section" (section))
(declare-function magit-get-section "ext:magit-section" (ident &optional root))
(declare-function magit-section-ident "ext:magit-section" (section))
(declare-function magit-section-match-assoc "ext:magit-section" (section alist))
(declare-function gptel-make-ollama "ext:gptel-ollama" (name &rest args))
(declare-function gptel--process-models "ext:gptel" (models))
(defvar org-roam-buffer-current-node)
(defvar org-roam-directory)
(defvar org-roam-mode-map)

;;; Options

(defgroup arcology-oracle nil
  "Similar notes, questions and conversations over an org-roam directory."
  :group 'org
  :prefix "arcology-oracle-"
  :link '(url-link "https://github.com/arcology-oracle/arcology-oracle"))

(defcustom arcology-oracle-url "http://127.0.0.1:7348"
  "Base URL of the arcology-oracle daemon.
For example \"http://127.0.0.1:7348\" (the daemon's default), or
\"https://notes.example.ts.net\" for a daemon behind a TLS proxy.
A path after the host is kept as a prefix of every route."
  :type 'string
  :group 'arcology-oracle)

(defcustom arcology-oracle-token nil
  "Bearer token sent to the daemon, or how to find it.
nil looks the token up with `auth-source', using the host and port
of `arcology-oracle-url', for example this line in ~/.authinfo.gpg:

  machine 127.0.0.1 port 7348 password s3cr3t

A string is the token itself; a function is called with no
arguments and returns the token (or nil for none)."
  :type '(choice (const :tag "Look it up with auth-source" nil)
                 (string :tag "Token")
                 (function :tag "Function returning the token"))
  :group 'arcology-oracle)

(defcustom arcology-oracle-timeout 15
  "Seconds of silence from the daemon after which an index request fails.
Index requests are search, similar notes and node look-ups; they
should take milliseconds.  For example 15."
  :type 'number
  :group 'arcology-oracle)

(defcustom arcology-oracle-llm-timeout 300
  "Seconds of silence after which a question, summary or conversation fails.
These wait for the language model, which may first have to load,
so the default is generous: 300 seconds."
  :type 'number
  :group 'arcology-oracle)

(defcustom arcology-oracle-result-count 10
  "How many similar notes or search results to ask for, for example 10."
  :type 'natnum
  :group 'arcology-oracle)

(defcustom arcology-oracle-idle-delay 0.5
  "Seconds of idle time before the similar notes follow point.
After point moves to another heading, `arcology-oracle-similar-mode'
waits this long before asking the daemon, for example 0.5."
  :type 'number
  :group 'arcology-oracle)

(defcustom arcology-oracle-roam-directory nil
  "The daemon's roam directory as seen from this Emacs, or nil.
nil asks the daemon (GET /status) and falls back on
`org-roam-directory'.  Set it when the daemon sees the notes under
another path, for example \"~/org/roam/\" for a daemon that reads
the same directory mounted as /srv/roam."
  :type '(choice (const :tag "Ask the daemon" nil) directory)
  :group 'arcology-oracle)

(defcustom arcology-oracle-similar-display-action
  '(display-buffer-in-side-window (side . right) (slot . 0) (window-width . 0.3))
  "The `display-buffer' action showing the similar notes buffer.
The default puts it in a side window on the right, a third of the
frame wide; for example
\\='(display-buffer-in-side-window (side . bottom) (window-height . 10))
puts it at the bottom."
  :type '(cons (choice function (repeat function))
               (alist :key-type symbol :value-type sexp))
  :group 'arcology-oracle)

(defcustom arcology-oracle-similar-exclude-linked nil
  "Non-nil leaves out of the similar notes the notes already linked.
For example t to see only notes you have not linked yet."
  :type 'boolean
  :group 'arcology-oracle)

(defcustom arcology-oracle-model nil
  "Chat model used for questions, summaries and conversations.
nil lets the daemon use its configured model; for example
\"llama3.2\"."
  :type '(choice (const :tag "The daemon's default" nil) string)
  :group 'arcology-oracle)

(defcustom arcology-oracle-ask-max-chars 24000
  "Most characters of the buffer sent along with a question.
Longer buffers are cut to this many characters around point; for
example 24000 (roughly 6000 tokens)."
  :type 'natnum
  :group 'arcology-oracle)

(defcustom arcology-oracle-conversation-tag "conversation"
  "Tag that marks the root heading of a conversation.
`arcology-oracle-converse' sends the nearest heading with this tag
\(or, without one, the top-level heading) around point.  For
example \"chat\"."
  :type 'string
  :group 'arcology-oracle)

(defcustom arcology-oracle-gptel-models '("llama3.2+notes")
  "Models offered by `arcology-oracle-gptel-backend' before the daemon answers.
The backend replaces this list with the daemon's GET /api/tags
answer when that arrives.  For example \\='(\"llama3.2+notes\")."
  :type '(repeat string)
  :group 'arcology-oracle)

(defface arcology-oracle-title '((t :inherit bold))
  "Face of a note's title in the similar notes."
  :group 'arcology-oracle)

(defface arcology-oracle-olp '((t :inherit shadow))
  "Face of a heading's outline path in the similar notes."
  :group 'arcology-oracle)

(defface arcology-oracle-score '((t :inherit font-lock-constant-face))
  "Face of the similarity score."
  :group 'arcology-oracle)

(defface arcology-oracle-snippet '((t :inherit default))
  "Face of the snippet under each similar note."
  :group 'arcology-oracle)

;;; Internals

;;;; Reporting

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
      (message "arcology-oracle: %s" text))))

(defmacro arcology-oracle--guard (&rest body)
  "Run BODY, turning an error into a message.
Used around every callback run from a process filter, sentinel or
timer: errors there must never escape as signals."
  (declare (indent 0) (debug t))
  `(with-demoted-errors "arcology-oracle: %S" ,@body))

;;;; JSON

(defun arcology-oracle--json-parse (string)
  "Parse the JSON text STRING into alists, lists, nil and t.
JSON null and false both read as nil."
  (if (fboundp 'json-parse-string)
      (json-parse-string string :object-type 'alist :array-type 'list
                         :null-object nil :false-object nil)
    (let ((json-object-type 'alist) (json-array-type 'list)
          (json-key-type 'symbol) (json-false nil) (json-null nil))
      (json-read-from-string string))))

(defun arcology-oracle--json-encode (value)
  "Return VALUE (an alist) as JSON text, UTF-8 encoded."
  (encode-coding-string (json-encode value) 'utf-8))

;;;; Server and token

(defvar arcology-oracle--token-cache nil
  "Alist of (URL . TOKEN) found with auth-source; TOKEN :none when absent.")

(defvar arcology-oracle--server-roam-dirs nil
  "Alist of (URL . DIRECTORY): each daemon's roam directory from /status.")

(defun arcology-oracle--base-url ()
  "Return `arcology-oracle-url' without a trailing slash."
  (string-remove-suffix "/" arcology-oracle-url))

(defun arcology-oracle--auth-source-token (url)
  "Return the token for the daemon at URL from `auth-source', or nil."
  (let ((cached (assoc url arcology-oracle--token-cache)))
    (if cached
        (and (stringp (cdr cached)) (cdr cached))
      (let* ((parsed (url-generic-parse-url url))
             (port (url-port parsed))
             (found (car (auth-source-search
                          :host (url-host parsed)
                          :port (list port (number-to-string port))
                          :require '(:secret) :max 1)))
             (secret (plist-get found :secret))
             (token (if (functionp secret) (funcall secret) secret)))
        (push (cons url (or token :none)) arcology-oracle--token-cache)
        token))))

(defun arcology-oracle-auth-token ()
  "Return the bearer token for the daemon, or nil (see `arcology-oracle-token')."
  (let ((token (pcase arcology-oracle-token
                 ((pred stringp) arcology-oracle-token)
                 ((pred functionp) (funcall arcology-oracle-token))
                 (_ (arcology-oracle--auth-source-token
                     (arcology-oracle--base-url))))))
    (and (stringp token) (not (string-empty-p token)) token)))

(defun arcology-oracle-forget-token ()
  "Forget the tokens found with auth-source; look them up again when needed."
  (interactive)
  (setq arcology-oracle--token-cache nil)
  (auth-source-forget-all-cached))

(defun arcology-oracle--roam-dir ()
  "Return the daemon's roam directory as known now, or nil.
That is `arcology-oracle-roam-directory', else what the daemon's
/status said, else `org-roam-directory'."
  (let ((dir (or arcology-oracle-roam-directory
                 (cdr (assoc (arcology-oracle--base-url)
                             arcology-oracle--server-roam-dirs))
                 (bound-and-true-p org-roam-directory))))
    (and dir (file-name-as-directory (expand-file-name dir)))))

(defun arcology-oracle--with-roam-dir (callback)
  "Call CALLBACK with the daemon's roam directory (or nil).
Asks the daemon's /status once per URL when nothing is configured;
CALLBACK may run later, from a process sentinel."
  (let ((url (arcology-oracle--base-url)))
    (if (or arcology-oracle-roam-directory
            (assoc url arcology-oracle--server-roam-dirs))
        (funcall callback (arcology-oracle--roam-dir))
      (arcology-oracle--json
       "GET" "/status"
       :callback (lambda (status)
                   (let ((dir (alist-get 'roam_dir status)))
                     (when (and (stringp dir) (file-directory-p dir))
                       (push (cons url dir) arcology-oracle--server-roam-dirs)))
                   (funcall callback (arcology-oracle--roam-dir)))
       :errback (lambda (_message) (funcall callback (arcology-oracle--roam-dir)))))))

(defun arcology-oracle--relative-file (file dir)
  "Return FILE relative to DIR when it lies under DIR, else nil."
  (when (and file dir)
    (let ((file (file-truename file))
          (dir (file-name-as-directory (file-truename dir))))
      (when (string-prefix-p dir file)
        (substring file (length dir))))))

;;;; HTTP client

;; One small HTTP/1.1 client on `open-network-stream' serves every
;; request, JSON and streamed alike: it never blocks (connecting is
;; asynchronous too, with :nowait), decodes chunked bodies as they
;; arrive, enforces a silence timeout, and can be cancelled by deleting
;; its process.  `url-retrieve' offers none of the streaming, reports
;; some failures synchronously and keeps global state in dynamic
;; variables, so it is not used.

(cl-defstruct (arcology-oracle--http
               (:constructor arcology-oracle--http-create)
               (:copier nil))
  "The state of one HTTP exchange with the daemon."
  process timer timeout (last-activity (float-time))
  (state 'headers)                      ; see `arcology-oracle--http-feed'
  (pending "")                          ; raw bytes not parsed yet
  status headers
  remaining                             ; bytes left in body or chunk; nil: until close
  body-parts                            ; raw body pieces, newest first
  on-data on-done on-error
  finished)

(defun arcology-oracle--http-parse-head (req head)
  "Record in REQ the status and headers of the response HEAD (bytes).
Choose how the body is framed: chunked, by length, or until close."
  (let* ((lines (split-string head "\r\n"))
         (status-line (car lines)))
    (unless (string-match "\\`HTTP/[0-9.]+ \\([0-9]\\{3\\}\\)" status-line)
      (error "Not an HTTP response: %S" (truncate-string-to-width status-line 60)))
    (setf (arcology-oracle--http-status req) (string-to-number (match-string 1 status-line)))
    (let ((headers nil))
      (dolist (line (cdr lines))
        (when (string-match "\\`\\([^:]+\\):[ \t]*\\(.*?\\)[ \t]*\\'" line)
          (push (cons (downcase (match-string 1 line)) (match-string 2 line)) headers)))
      (setq headers (nreverse headers))
      (setf (arcology-oracle--http-headers req) headers)
      (let ((encoding (cdr (assoc "transfer-encoding" headers)))
            (length (cdr (assoc "content-length" headers)))
            (status (arcology-oracle--http-status req)))
        (cond
         ((or (memq status '(204 304)) (< status 200))
          (setf (arcology-oracle--http-state req) 'done))
         ((and encoding (string-match-p "chunked" encoding))
          (setf (arcology-oracle--http-state req) 'chunk-size))
         (length
          (let ((n (string-to-number length)))
            (setf (arcology-oracle--http-remaining req) n
                  (arcology-oracle--http-state req) (if (zerop n) 'done 'body))))
         (t (setf (arcology-oracle--http-remaining req) nil
                  (arcology-oracle--http-state req) 'body)))))))

(defun arcology-oracle--http-feed (req bytes)
  "Feed the raw response BYTES to REQ's parser; return the body bytes decoded.
The parser's state is one of `headers', `body' (by length, or
until the connection closes when the remaining count is nil),
`chunk-size', `chunk-data', `chunk-crlf', `trailer' and `done'.
Bytes may arrive split anywhere; what cannot be parsed yet waits
in the pending slot.  Signals an error on a malformed response."
  (let ((buf (concat (arcology-oracle--http-pending req) bytes))
        (out nil)
        (more t))
    (while more
      (pcase (arcology-oracle--http-state req)
        ('headers
         (let ((end (string-search "\r\n\r\n" buf)))
           (if (not end)
               (setq more nil)
             (arcology-oracle--http-parse-head req (substring buf 0 end))
             (setq buf (substring buf (+ end 4))))))
        ((or 'body 'chunk-data)
         (let ((remaining (arcology-oracle--http-remaining req)))
           (cond
            ((null remaining)
             (push buf out)
             (setq buf "" more nil))
            ((<= remaining (length buf))
             (push (substring buf 0 remaining) out)
             (setq buf (substring buf remaining))
             (setf (arcology-oracle--http-remaining req) 0
                   (arcology-oracle--http-state req)
                   (if (eq (arcology-oracle--http-state req) 'body) 'done 'chunk-crlf)))
            (t
             (push buf out)
             (setf (arcology-oracle--http-remaining req) (- remaining (length buf)))
             (setq buf "" more nil)))))
        ('chunk-size
         (let ((eol (string-search "\r\n" buf)))
           (if (not eol)
               (setq more nil)
             (let ((line (substring buf 0 eol)))
               (unless (string-match "\\`[ \t]*\\([0-9a-fA-F]+\\)" line)
                 (error "Bad chunk size %S" (truncate-string-to-width line 20)))
               (let ((size (string-to-number (match-string 1 line) 16)))
                 (setq buf (substring buf (+ eol 2)))
                 (if (zerop size)
                     (setf (arcology-oracle--http-state req) 'trailer)
                   (setf (arcology-oracle--http-remaining req) size
                         (arcology-oracle--http-state req) 'chunk-data)))))))
        ('chunk-crlf
         (if (< (length buf) 2)
             (setq more nil)
           (setq buf (substring buf 2))
           (setf (arcology-oracle--http-state req) 'chunk-size)))
        ('trailer
         (let ((eol (string-search "\r\n" buf)))
           (cond ((not eol) (setq more nil))
                 ((zerop eol) (setq buf "")
                  (setf (arcology-oracle--http-state req) 'done))
                 (t (setq buf (substring buf (+ eol 2)))))))
        (_ (setq more nil))))
    (setf (arcology-oracle--http-pending req) buf)
    (apply #'concat (nreverse out))))

(defun arcology-oracle--http-ok-p (req)
  "Return non-nil when REQ's response status is 2xx."
  (let ((status (arcology-oracle--http-status req)))
    (and status (<= 200 status 299))))

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
    (arcology-oracle--guard
      (if error-message
          (when (arcology-oracle--http-on-error req)
            (funcall (arcology-oracle--http-on-error req) error-message))
        (when (arcology-oracle--http-on-done req)
          (funcall (arcology-oracle--http-on-done req)
                   (arcology-oracle--http-status req)
                   (arcology-oracle--http-headers req)
                   (apply #'concat (reverse (arcology-oracle--http-body-parts req)))))))))

(defun arcology-oracle--http-filter (req bytes)
  "Process filter of REQ: parse BYTES, pass on body data, finish when complete."
  (unless (arcology-oracle--http-finished req)
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
        (condition-case err
            (process-send-string proc request-bytes)
          (error (arcology-oracle--http-finish
                  req (format "cannot send to the daemon (%s)" (error-message-string err))))))
       ((and (eq (arcology-oracle--http-state req) 'body)
             (null (arcology-oracle--http-remaining req)))
        ;; A body framed by the end of the connection is complete now.
        (arcology-oracle--http-finish req))
       ((arcology-oracle--http-status req)
        (arcology-oracle--http-finish req "the daemon closed the connection mid-answer"))
       (t
        (arcology-oracle--http-finish
         req (format "daemon not reachable at %s (%s)" (arcology-oracle--base-url)
                     (arcology-oracle--describe-failure event))))))))

(defun arcology-oracle--http-watchdog (req)
  "Fail REQ when the daemon has been silent longer than its timeout."
  (unless (arcology-oracle--http-finished req)
    (let* ((timeout (arcology-oracle--http-timeout req))
           (left (- (+ (arcology-oracle--http-last-activity req) timeout) (float-time))))
      (if (> left 0)
          (setf (arcology-oracle--http-timer req)
                (run-at-time left nil #'arcology-oracle--http-watchdog req))
        (arcology-oracle--http-finish
         req (format "no answer from the daemon within %s seconds" timeout))))))

(cl-defun arcology-oracle--http-request (method path &key query json accept timeout
                                                on-data on-done on-error)
  "Send an HTTP request to the daemon without waiting; return its state.
METHOD is \"GET\" or \"POST\"; PATH starts with a slash and is
appended to `arcology-oracle-url'.  QUERY is a list of (NAME VALUE)
lists for the query string; JSON an alist sent as the JSON body.
ACCEPT is the Accept header; TIMEOUT the seconds of silence
tolerated (default `arcology-oracle-timeout').

ON-DATA, when given, receives each piece of a successful (2xx)
body as raw bytes as soon as it arrives.  Exactly one of ON-DONE
and ON-ERROR is then called, always later (never before this
function returns):

- ON-DONE with STATUS (an integer), HEADERS (an alist of lowercase
  names to values) and BODY (the raw bytes, unibyte; without the
  parts given to ON-DATA) when a response, of any status, arrived
  in full;
- ON-ERROR with a short message when the daemon could not be
  reached, broke the connection or stayed silent too long.

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
                       (if body
                           (format "Content-Type: application/json\r\nContent-Length: %d\r\n"
                                   (length body))
                         "")
                       "\r\n"))
         (bytes (concat (encode-coding-string head 'utf-8) body))
         (req (arcology-oracle--http-create
               :timeout (or timeout arcology-oracle-timeout)
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
            (process-send-string proc bytes))
          (setf (arcology-oracle--http-timer req)
                (run-at-time (arcology-oracle--http-timeout req) nil
                             #'arcology-oracle--http-watchdog req)))
      (error
       (run-at-time 0 nil #'arcology-oracle--http-finish req
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

(defun arcology-oracle--error-message (status data body)
  "Return a short message for an HTTP error STATUS with DATA or raw BODY."
  (let* ((err (and (listp data) (alist-get 'error data)))
         (text (cond ((stringp err) err)
                     ((and (listp err) (stringp (alist-get 'message err)))
                      (alist-get 'message err))
                     (t (string-trim (decode-coding-string (or body "") 'utf-8))))))
    (concat
     (if (= status 401)
         "unauthorized: set `arcology-oracle-token' or add an auth-source entry"
       (truncate-string-to-width (replace-regexp-in-string "[\n\r]+" " " text) 160 nil nil "…"))
     (format " (HTTP %d)" status))))

(cl-defun arcology-oracle--json (method path &key query json timeout callback errback)
  "Send a JSON request to the daemon; return the request state.
METHOD, PATH, QUERY, JSON and TIMEOUT are as for
`arcology-oracle--http-request'.  CALLBACK is called with the
parsed answer of a 2xx response; ERRBACK with a short message for
every failure: unreachable daemon, HTTP error (with the daemon's
error text) or malformed JSON.  Without ERRBACK, failures are
reported in the echo area."
  (let ((errback (or errback #'arcology-oracle--report)))
    (arcology-oracle--http-request
     method path :query query :json json :timeout timeout :accept "application/json"
     :on-error errback
     :on-done
     (lambda (status _headers body)
       (let ((data (condition-case nil
                       (arcology-oracle--json-parse (decode-coding-string body 'utf-8))
                     (error :invalid))))
         (cond ((not (<= 200 status 299))
                (funcall errback (arcology-oracle--error-message status data body)))
               ((eq data :invalid)
                (funcall errback "the daemon sent malformed JSON"))
               (t (funcall callback data))))))))

(cl-defun arcology-oracle--ndjson (method path &key json timeout on-event on-done errback)
  "Send a request whose answer streams as NDJSON; return the request state.
Each JSON line of a 2xx answer is parsed and passed to ON-EVENT as
soon as it is complete; ON-DONE runs after the last one.  ERRBACK
gets a short message for an unreachable daemon, an HTTP error or
a broken stream.  METHOD, PATH, JSON and TIMEOUT are as for
`arcology-oracle--http-request'."
  (let ((rest "")
        (errback (or errback #'arcology-oracle--report)))
    (cl-flet ((emit (line)
                (unless (string-blank-p line)
                  (let ((event (condition-case nil
                                   (arcology-oracle--json-parse (decode-coding-string line 'utf-8))
                                 (error nil))))
                    (if (consp event)
                        (funcall on-event event)
                      (arcology-oracle--report "skipped a malformed line from the daemon" t))))))
      (arcology-oracle--http-request
       method path :json json :timeout timeout :accept "application/x-ndjson"
       :on-error errback
       :on-data (lambda (bytes)
                  ;; Split on raw newlines: a newline byte never occurs
                  ;; inside a multibyte UTF-8 sequence.
                  (let ((lines (split-string (concat rest bytes) "\n")))
                    (setq rest (car (last lines)))
                    (mapc #'emit (butlast lines))))
       :on-done (lambda (status _headers body)
                  (if (<= 200 status 299)
                      (progn (emit rest)
                             (when on-done (funcall on-done)))
                    (funcall errback
                             (arcology-oracle--error-message
                              status
                              (condition-case nil
                                  (arcology-oracle--json-parse (decode-coding-string body 'utf-8))
                                (error nil))
                              body))))))))

;;;; Org context

(defun arcology-oracle--heading-start ()
  "Return the start of the heading at point, or `point-min' before the first."
  (save-excursion
    (if (org-before-first-heading-p)
        (point-min)
      (org-back-to-heading t)
      (point))))

(defun arcology-oracle--heading-context ()
  "Describe the heading at point as a plist.
Keys: :start (position), :line (1-based, ignoring narrowing),
:title, :olp (ancestor titles), :text (the heading and its body,
without sub-headings) and :node-id (the ID of the nearest
enclosing org-roam node, possibly a file-level one)."
  (save-excursion
    (save-restriction
      (widen)
      (let* ((start (arcology-oracle--heading-start))
             (first (= start (point-min)))
             (title (if (and first (not (org-at-heading-p)))
                        (or (cadr (assoc "TITLE" (org-collect-keywords '("TITLE"))))
                            (and buffer-file-name
                                 (file-name-base buffer-file-name))
                            (buffer-name))
                      (goto-char start)
                      (org-get-heading t t t t)))
             (olp (unless (and first (not (org-at-heading-p)))
                    (goto-char start)
                    (org-get-outline-path)))
             (end (progn (goto-char start)
                         (if (org-at-heading-p) (end-of-line) (goto-char (point-min)))
                         (if (re-search-forward org-outline-regexp-bol nil t)
                             (match-beginning 0)
                           (point-max)))))
        (goto-char start)
        (list :start start
              :line (line-number-at-pos start t)
              :title (substring-no-properties (or title ""))
              :olp (mapcar #'substring-no-properties olp)
              :text (buffer-substring-no-properties start (min end (+ start 8000)))
              :node-id (org-entry-get nil "ID" t))))))

(defun arcology-oracle--outline (result)
  "Return the outline path of RESULT, ending with its heading, as a string."
  (let ((olp (append (alist-get 'olp result) (list (alist-get 'heading result)))))
    (mapconcat #'org-link-display-format (delq nil olp) " › ")))

(defun arcology-oracle--one-line (text width)
  "Return TEXT on one line, cut to WIDTH columns."
  (truncate-string-to-width
   (string-trim (replace-regexp-in-string "[ \t\n\r]+" " " (or text ""))) width nil nil "…"))

;;;; Visiting results

(defun arcology-oracle--roam-node-location (id)
  "Return (FILE . POSITION) of the org-roam node ID, or nil.
Uses org-roam's database when org-roam is loaded; never signals."
  (when (and id (fboundp 'org-roam-node-from-id))
    (condition-case nil
        (when-let* ((node (org-roam-node-from-id id))
                    (file (org-roam-node-file node)))
          (cons file (or (org-roam-node-point node) 1)))
      (error nil))))

(defun arcology-oracle--file-location (result)
  "Return (FILE . LINE) of RESULT when its file exists here, else nil."
  (when-let* ((dir (arcology-oracle--roam-dir))
              (rel (alist-get 'file result))
              (file (expand-file-name rel dir)))
    (when (file-exists-p file)
      (cons file (or (alist-get 'line result) 1)))))

(defun arcology-oracle--goto-heading (line heading)
  "Go to LINE, or to the heading titled HEADING nearest to it.
The index may lag behind the file by a few lines."
  (widen)
  (goto-char (point-min))
  (forward-line (1- line))
  (when (and heading (> line 1) (derived-mode-p 'org-mode)
             (not (and (org-at-heading-p)
                       (equal (org-get-heading t t t t) heading))))
    (let ((target (point))
          (re (format org-complex-heading-regexp-format (regexp-quote heading)))
          best)
      (goto-char (point-min))
      (while (re-search-forward re nil t)
        (let ((pos (line-beginning-position)))
          (when (or (not best) (< (abs (- pos target)) (abs (- best target))))
            (setq best pos))))
      (goto-char (or best target)))))

(defun arcology-oracle--visit (result)
  "Visit the note of RESULT (a search or similar result, or a source).
Tries, in order: the heading's own ID through org-roam, the file
and line under the roam directory, the enclosing node's ID
through org-roam, then `org-id-find' when org-id's locations are
loaded."
  (let* ((heading-id (alist-get 'heading_id result))
         (node-id (alist-get 'node_id result))
         (from-list (or (window-parameter nil 'window-side)
                        (derived-mode-p 'arcology-oracle-similar-buffer-mode 'org-roam-mode)))
         location line)
    (cond
     ((setq location (arcology-oracle--roam-node-location heading-id)))
     ((setq location (arcology-oracle--file-location result))
      (setq line (cdr location)))
     ((setq location (arcology-oracle--roam-node-location node-id)))
     ;; Only when org-id has its locations loaded: loading them may scan files.
     ((let ((found (and (or heading-id node-id)
                        (bound-and-true-p org-id-locations)
                        (ignore-errors (org-id-find (or heading-id node-id))))))
        (setq location found)))
     (t (user-error "Cannot find %s here: is `arcology-oracle-roam-directory' right?"
                    (or (alist-get 'file result) (alist-get 'title result)))))
    (let ((buffer (find-file-noselect (car location))))
      (if from-list
          (pop-to-buffer buffer '(display-buffer-use-some-window (inhibit-same-window . t)))
        (pop-to-buffer-same-window buffer))
      (if line
          (arcology-oracle--goto-heading line (alist-get 'heading result))
        (widen)
        (goto-char (cdr location)))
      (when (derived-mode-p 'org-mode) (org-show-context))
      (recenter 0))))

(defun arcology-oracle-visit-result ()
  "Visit the note listed at point (similar notes or the org-roam buffer)."
  (interactive)
  (let ((result (get-text-property (point) 'arcology-oracle-result)))
    (unless result (user-error "No note at point"))
    (arcology-oracle--visit result)))

;;; Similar

(defvar arcology-oracle-similar-buffer-name "*arcology-oracle similar*"
  "Name of the buffer listing the notes similar to the heading at point.")

(defvar arcology-oracle-similar-mode)   ; defined below by `define-minor-mode'

(defvar arcology-oracle--similar-generation 0
  "Counter of similar-notes requests; an answer to an older one is dropped.")

(defvar arcology-oracle--similar-request nil
  "The similar-notes request in flight, if any.")

(defvar arcology-oracle--similar-timer nil
  "Idle timer of the next similar-notes refresh.")

(defvar-local arcology-oracle--similar-last-heading nil
  "Start of the heading whose similar notes were last asked for.")

(defvar-local arcology-oracle--similar-source nil
  "In the similar buffer: the buffer whose heading the list is about.")

(defvar arcology-oracle-similar-buffer-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'arcology-oracle-visit-result)
    (define-key map [mouse-2] #'arcology-oracle-visit-result)
    (define-key map (kbd "n") #'arcology-oracle-similar-next)
    (define-key map (kbd "p") #'arcology-oracle-similar-previous)
    (define-key map (kbd "g") #'arcology-oracle-similar-refresh)
    map)
  "Keymap of the similar notes buffer.")

(define-derived-mode arcology-oracle-similar-buffer-mode special-mode "Similar"
  "Major mode of the buffer listing notes similar to the heading at point.
\\<arcology-oracle-similar-buffer-mode-map>\
\\[arcology-oracle-visit-result] visits the note at point, \
\\[arcology-oracle-similar-refresh] asks again.

\\{arcology-oracle-similar-buffer-mode-map}"
  (setq-local truncate-lines t)
  (setq-local revert-buffer-function
              (lambda (&rest _) (arcology-oracle-similar-refresh))))

(defun arcology-oracle-similar-next ()
  "Move to the next note in the list."
  (interactive)
  (let ((pos (next-single-property-change (point) 'arcology-oracle-entry)))
    (when (and pos (not (get-text-property pos 'arcology-oracle-entry)))
      (setq pos (next-single-property-change pos 'arcology-oracle-entry)))
    (if pos (goto-char pos) (message "No more notes"))))

(defun arcology-oracle-similar-previous ()
  "Move to the previous note in the list."
  (interactive)
  (let ((pos (previous-single-property-change (point) 'arcology-oracle-entry)))
    (when (and pos (not (get-text-property pos 'arcology-oracle-entry)))
      (setq pos (previous-single-property-change pos 'arcology-oracle-entry)))
    (when (and pos (not (get-text-property pos 'arcology-oracle-entry)))
      (setq pos nil))
    (if pos (goto-char pos) (message "No previous note"))))

(defun arcology-oracle--similar-buffer ()
  "Return the similar notes buffer, creating it when needed."
  (or (get-buffer arcology-oracle-similar-buffer-name)
      (with-current-buffer (get-buffer-create arcology-oracle-similar-buffer-name)
        (arcology-oracle-similar-buffer-mode)
        (current-buffer))))

(defun arcology-oracle--format-result (result)
  "Return the text of one similar note or search RESULT, three lines."
  (let* ((width (max 40 (- (or (when-let ((w (get-buffer-window arcology-oracle-similar-buffer-name t)))
                                 (window-width w))
                               80)
                           2)))
         (title (org-link-display-format (or (alist-get 'title result) "?")))
         (score (format "%.2f" (or (alist-get 'score result) 0)))
         (outline (arcology-oracle--outline result))
         (first (concat (propertize (arcology-oracle--one-line title (- width (length score) 2))
                                    'face 'arcology-oracle-title)
                        "  " (propertize score 'face 'arcology-oracle-score)))
         (text (concat first "\n"
                       "  " (propertize (arcology-oracle--one-line
                                         (if (equal outline title)
                                             (alist-get 'file result)
                                           outline)
                                         (- width 2))
                                        'face 'arcology-oracle-olp)
                       "\n"
                       "  " (propertize (arcology-oracle--one-line (alist-get 'snippet result)
                                                                   (- width 2))
                                        'face 'arcology-oracle-snippet)
                       "\n")))
    (add-text-properties 0 (length first) '(arcology-oracle-entry t) text)
    (add-text-properties 0 (length text)
                         `(arcology-oracle-result ,result mouse-face highlight
                                                  help-echo "RET: visit this note")
                         text)
    text))

(defun arcology-oracle--similar-render (source title results &optional note)
  "Fill the similar buffer for heading TITLE of buffer SOURCE.
RESULTS is the list of results, or a string to show instead (a
progress or error message); NOTE is shown under the header."
  (with-current-buffer (arcology-oracle--similar-buffer)
    (let* ((inhibit-read-only t)
           (window (get-buffer-window (current-buffer) t))
           (line (line-number-at-pos (if window (window-point window) (point))))
           (same (equal title (get-text-property (point-min) 'arcology-oracle-title))))
      (setq arcology-oracle--similar-source source)
      (erase-buffer)
      (insert (propertize (concat "Similar to: " (org-link-display-format (or title "")))
                          'face 'bold 'arcology-oracle-title title)
              "\n")
      (when note (insert (propertize note 'face 'shadow) "\n"))
      (insert "\n")
      (cond ((stringp results) (insert (propertize results 'face 'shadow) "\n"))
            ((null results) (insert (propertize "No similar notes." 'face 'shadow) "\n"))
            (t (dolist (result results)
                 (insert (arcology-oracle--format-result result) "\n"))))
      (goto-char (point-min))
      ;; Keep the reader's place when the same heading was refreshed.
      (when same (forward-line (1- line)))
      (when window
        (set-window-point window (point))
        (unless same (set-window-start window (point-min)))))))

(defun arcology-oracle--similar-visible-p ()
  "Return non-nil when the similar buffer is shown in some window."
  (when-let ((buffer (get-buffer arcology-oracle-similar-buffer-name)))
    (get-buffer-window buffer t)))

(defun arcology-oracle--similar-request-args (context roam-dir)
  "Return the HTTP request finding notes similar to CONTEXT.
CONTEXT is from `arcology-oracle--heading-context'; ROAM-DIR the
daemon's roam directory.  An unmodified file under ROAM-DIR is
asked about by file and line, which the daemon knows best;
anything else (unsaved edits, files elsewhere) by its text.
Returns (METHOD PATH QUERY JSON)."
  (let* ((k arcology-oracle-result-count)
         (rel (and roam-dir buffer-file-name (not (buffer-modified-p))
                   (arcology-oracle--relative-file buffer-file-name roam-dir))))
    (if rel
        (list "GET" "/similar"
              `(("file" ,rel) ("line" ,(plist-get context :line)) ("k" ,k)
                ,@(when arcology-oracle-similar-exclude-linked '(("exclude_linked" "true"))))
              nil)
      ;; One more: the heading's own node comes back from a text query.
      (list "POST" "/similar" nil
            `((text . ,(plist-get context :text)) (k . ,(1+ k)))))))

(defun arcology-oracle--similar-filter (results context)
  "Drop from RESULTS the node of CONTEXT itself; keep the count asked for."
  (let ((own (plist-get context :node-id)))
    (seq-take (seq-remove (lambda (r) (and own (equal own (alist-get 'node_id r)))) results)
              arcology-oracle-result-count)))

(defun arcology-oracle-similar-refresh (&optional quiet)
  "Ask the daemon for the notes similar to the heading at point.
In the similar notes buffer, ask again about the heading it lists.
The answer replaces the list when it arrives, unless a newer
request was made in between.  QUIET (automatic refreshes) reports
a daemon that is down only once."
  (interactive)
  (let ((source (if (derived-mode-p 'arcology-oracle-similar-buffer-mode)
                    arcology-oracle--similar-source
                  (current-buffer))))
    (unless (buffer-live-p source)
      (user-error "No buffer to find similar notes for"))
    (with-current-buffer source
      (unless (derived-mode-p 'org-mode)
        (user-error "Similar notes need an org-mode buffer"))
      (let* ((context (arcology-oracle--heading-context))
             (title (plist-get context :title))
             (generation (cl-incf arcology-oracle--similar-generation)))
        (setq arcology-oracle--similar-last-heading (plist-get context :start))
        (arcology-oracle--http-cancel arcology-oracle--similar-request)
        (setq arcology-oracle--similar-request nil)
        (unless (get-text-property (point-min) 'arcology-oracle-title
                                   (arcology-oracle--similar-buffer))
          (arcology-oracle--similar-render source title "Looking for similar notes…"))
        (arcology-oracle--with-roam-dir
         (lambda (roam-dir)
           (when (and (= generation arcology-oracle--similar-generation)
                      (buffer-live-p source))
             (pcase-let ((`(,method ,path ,query ,json)
                          (with-current-buffer source
                            (arcology-oracle--similar-request-args context roam-dir))))
               (setq arcology-oracle--similar-request
                     (arcology-oracle--json
                      method path :query query :json json
                      :callback
                      (lambda (answer)
                        (when (= generation arcology-oracle--similar-generation)
                          (setq arcology-oracle--similar-request nil)
                          (arcology-oracle--similar-render
                           source title
                           (arcology-oracle--similar-filter (alist-get 'results answer) context)
                           (when (equal (alist-get 'mode answer) "keyword")
                             "(keyword matches: embeddings are not ready)"))))
                      :errback
                      (lambda (message)
                        (when (= generation arcology-oracle--similar-generation)
                          (setq arcology-oracle--similar-request nil)
                          (arcology-oracle--similar-render source title message)
                          (arcology-oracle--report message quiet)))))))))))))

(defun arcology-oracle--similar-timer-fn (buffer)
  "Refresh the similar notes for BUFFER, if it is still current and shown."
  (setq arcology-oracle--similar-timer nil)
  (arcology-oracle--guard
    (when (and (buffer-live-p buffer)
               (eq buffer (window-buffer (selected-window)))
               (arcology-oracle--similar-visible-p))
      (with-current-buffer buffer
        (when arcology-oracle-similar-mode
          (arcology-oracle-similar-refresh t))))))

(defun arcology-oracle--similar-schedule (delay)
  "Refresh the similar notes for the current buffer after DELAY idle seconds."
  (when (timerp arcology-oracle--similar-timer)
    (cancel-timer arcology-oracle--similar-timer))
  (setq arcology-oracle--similar-timer
        (run-with-idle-timer delay nil #'arcology-oracle--similar-timer-fn (current-buffer))))

(defun arcology-oracle--similar-post-command-h ()
  "Schedule a refresh when point has moved to another heading.
This runs after every command, so it only compares two positions."
  (when (arcology-oracle--similar-visible-p)
    (let ((start (arcology-oracle--heading-start)))
      (unless (and (eql start arcology-oracle--similar-last-heading)
                   (eq (current-buffer)
                       (buffer-local-value 'arcology-oracle--similar-source
                                           (arcology-oracle--similar-buffer))))
        (setq arcology-oracle--similar-last-heading start)
        (arcology-oracle--similar-schedule arcology-oracle-idle-delay)))))

(defun arcology-oracle--similar-after-save-h ()
  "Refresh the similar notes after a save, once the daemon has re-read the file.
The daemon waits for writes to settle and re-indexes the file, so
refresh a little later than after a move."
  (when (arcology-oracle--similar-visible-p)
    (arcology-oracle--similar-schedule (max 1.0 arcology-oracle-idle-delay))))

;;;###autoload
(define-minor-mode arcology-oracle-similar-mode
  "Show notes similar to the heading at point in a side window.
The list follows point from heading to heading after
`arcology-oracle-idle-delay' idle seconds, and after each save.
Hiding the window pauses it; `arcology-oracle-similar-show' brings
it back.  \\<arcology-oracle-similar-buffer-mode-map>In the list, \
\\[arcology-oracle-visit-result] visits a note and \
\\[arcology-oracle-similar-refresh] asks again."
  :lighter " Similar"
  :group 'arcology-oracle
  (if arcology-oracle-similar-mode
      (if (not (derived-mode-p 'org-mode))
          (progn (setq arcology-oracle-similar-mode nil)
                 (message "arcology-oracle: similar notes need an org-mode buffer"))
        (add-hook 'post-command-hook #'arcology-oracle--similar-post-command-h nil t)
        (add-hook 'after-save-hook #'arcology-oracle--similar-after-save-h nil t)
        (setq arcology-oracle--similar-last-heading nil)
        (when (called-interactively-p 'any)
          (arcology-oracle-similar-show)))
    (remove-hook 'post-command-hook #'arcology-oracle--similar-post-command-h t)
    (remove-hook 'after-save-hook #'arcology-oracle--similar-after-save-h t)))

;;;###autoload
(defun arcology-oracle-similar-turn-on ()
  "Turn on `arcology-oracle-similar-mode' in an org buffer visiting a file.
For `org-mode-hook': buffers without a file, such as the answers
buffer, are left alone."
  (when (and buffer-file-name (derived-mode-p 'org-mode))
    (arcology-oracle-similar-mode 1)))

;;;###autoload
(define-globalized-minor-mode arcology-oracle-global-similar-mode
  arcology-oracle-similar-mode arcology-oracle-similar-turn-on
  :group 'arcology-oracle)

;;;###autoload
(defun arcology-oracle-similar-show ()
  "Show the similar notes window and fill it for the heading at point."
  (interactive)
  (unless (derived-mode-p 'org-mode)
    (user-error "Similar notes need an org-mode buffer"))
  (unless arcology-oracle-similar-mode (arcology-oracle-similar-mode 1))
  (display-buffer (arcology-oracle--similar-buffer) arcology-oracle-similar-display-action)
  (arcology-oracle-similar-refresh))

;;;; org-roam section

(defvar arcology-oracle--section-cache (make-hash-table :test 'equal)
  "Similar notes per node ID for the org-roam section, as (TIME . RESULTS).
RESULTS is a list of results, or an error message string.")

(defconst arcology-oracle--section-cache-seconds 60
  "How long the org-roam section reuses an answer before asking again.")

(defvar-local arcology-oracle--section-pending nil
  "In an org-roam buffer: the node ID whose similar notes are awaited.")

(defvar arcology-oracle-section-map
  (let ((map (make-sparse-keymap)))
    (define-key map [remap org-roam-buffer-visit-thing] #'arcology-oracle-visit-result)
    (define-key map (kbd "RET") #'arcology-oracle-visit-result)
    map)
  "Keymap of the entries of `arcology-oracle-similar-section'.")

(defmacro arcology-oracle--with-magit (args &rest body)
  "Run BODY, using magit-section macros, with ARGS bound to themselves.
magit-section is optional: when it was not loaded at compile time,
BODY is macro-expanded when it first runs, after requiring it, so
that the compiled file keeps working once magit-section is
installed."
  (declare (indent 1) (debug (sexp body)))
  (if (featurep 'magit-section)
      `(progn ,@body)
    `(progn (require 'magit-section)
            (funcall (eval '(lambda ,args ,@body) t) ,@args))))

(defun arcology-oracle--section-cached (id)
  "Return the fresh cache entry (TIME . RESULTS) for node ID, or nil."
  (let ((entry (gethash id arcology-oracle--section-cache)))
    (when (and entry (< (- (float-time) (car entry)) arcology-oracle--section-cache-seconds))
      entry)))

(defun arcology-oracle--section-rerender (id)
  "Render again the org-roam buffers awaiting the similar notes of node ID."
  (dolist (buffer (buffer-list))
    (when (and (equal (buffer-local-value 'arcology-oracle--section-pending buffer) id)
               (fboundp 'org-roam-buffer-render-contents))
      (with-current-buffer buffer
        (let ((points (mapcar (lambda (w) (cons w (window-point w)))
                              (get-buffer-window-list buffer nil t)))
              (pt (point)))
          (org-roam-buffer-render-contents)
          (goto-char (min pt (point-max)))
          (dolist (wp points)
            (set-window-point (car wp) (min (cdr wp) (point-max)))))))))

(defun arcology-oracle--section-fetch (id)
  "Ask the daemon for the notes similar to node ID, for the org-roam section."
  (arcology-oracle--json
   "GET" "/similar"
   :query `(("node" ,id) ("k" ,arcology-oracle-result-count)
            ,@(when arcology-oracle-similar-exclude-linked '(("exclude_linked" "true"))))
   :callback (lambda (answer)
               (puthash id (cons (float-time) (alist-get 'results answer))
                        arcology-oracle--section-cache)
               (arcology-oracle--section-rerender id))
   :errback (lambda (message)
              ;; Keep errors briefly, so that a daemon that is down is not
              ;; asked again at every redisplay.
              (puthash id (cons (- (float-time) (- arcology-oracle--section-cache-seconds 10))
                                message)
                       arcology-oracle--section-cache)
              (arcology-oracle--report message t)
              (arcology-oracle--section-rerender id))))

;;;###autoload
(defun arcology-oracle-similar-section (node)
  "Insert the notes similar to NODE into the org-roam buffer.
Add it to `org-roam-mode-sections', for example:

  (add-to-list \\='org-roam-mode-sections
               #\\='arcology-oracle-similar-section t)

The section never waits for the daemon: it shows a placeholder,
and the buffer is rendered again when the answer arrives.
Answers are reused for a minute."
  (let* ((id (org-roam-node-id node))
         (entry (and id (arcology-oracle--section-cached id))))
    (when id
      (setq-local arcology-oracle--section-pending (unless entry id))
      (unless entry (arcology-oracle--section-fetch id))
      (arcology-oracle--insert-section (cdr entry) (not entry)))))

(defun arcology-oracle--insert-section (results waiting)
  "Insert the similar notes section with RESULTS (a list or a message).
WAITING non-nil inserts a placeholder instead."
  (let ((map arcology-oracle-section-map))
    (when (and (boundp 'org-roam-mode-map) (not (keymap-parent map)))
      (set-keymap-parent map org-roam-mode-map))
    (arcology-oracle--with-magit (results waiting map)
      (magit-insert-section (arcology-oracle-similar)
        (magit-insert-heading "Similar notes:")
        (cond
         (waiting (insert (propertize "  Looking for similar notes…\n" 'face 'shadow)))
         ((stringp results) (insert (propertize (concat "  " results "\n") 'face 'shadow)))
         ((null results) (insert (propertize "  No similar notes.\n" 'face 'shadow)))
         (t
          (dolist (result results)
            (magit-insert-section (arcology-oracle-similar-entry result)
              (magit-insert-heading
                (let* ((title (org-link-display-format (or (alist-get 'title result) "?")))
                       (outline (arcology-oracle--outline result))
                       (text (concat (propertize title 'font-lock-face 'arcology-oracle-title)
                                     (if (equal outline title) ""
                                       (concat " (" (propertize outline 'font-lock-face
                                                                'arcology-oracle-olp)
                                               ")"))
                                     " "
                                     (propertize (format "%.2f" (or (alist-get 'score result) 0))
                                                'font-lock-face 'arcology-oracle-score))))
                  (add-text-properties 0 (length text)
                                       `(arcology-oracle-result ,result keymap ,map)
                                       text)
                  text))
              (insert (propertize (concat "  " (arcology-oracle--one-line
                                                (alist-get 'snippet result) 100)
                                          "\n")
                                  'arcology-oracle-result result 'keymap map))))))
        (insert "\n")))))

;;; Ask

(defvar arcology-oracle-answer-buffer-name "*arcology-oracle answers*"
  "Name of the org buffer where answers to questions stream.")

(defvar arcology-oracle--ask-history nil
  "Questions asked with `arcology-oracle-ask'.")

(defun arcology-oracle--source-link (source)
  "Return an org link to SOURCE (a source or result of the daemon)."
  (let* ((title (org-link-display-format (or (alist-get 'title source) "?")))
         (heading (alist-get 'heading source))
         (label (if (and heading (not (equal heading title)))
                    (concat title " › " (org-link-display-format heading))
                  title))
         (id (or (alist-get 'heading_id source) (alist-get 'node_id source)))
         (file (car (arcology-oracle--file-location source))))
    (org-link-make-string
     (cond (id (concat "id:" id))
           (file (format "file:%s::%d" file (or (alist-get 'line source) 1)))
           (t (concat "file:" (or (alist-get 'file source) ""))))
     (replace-regexp-in-string "[][]" "" label))))

(defun arcology-oracle--format-sources (sources)
  "Return an org list of SOURCES as numbered links, or nil when empty."
  (when sources
    (mapconcat (lambda (s)
                 (format "- [%s] %s\n" (or (alist-get 'n s) "?")
                         (arcology-oracle--source-link s)))
               sources "")))

(defun arcology-oracle--answer-buffer ()
  "Return the answers buffer, in `org-mode'."
  (let ((buffer (get-buffer-create arcology-oracle-answer-buffer-name)))
    (with-current-buffer buffer
      (unless (derived-mode-p 'org-mode) (org-mode)))
    buffer))

(defun arcology-oracle--insert-following (marker text)
  "Insert TEXT at MARKER; windows whose point was there follow it."
  (when (buffer-live-p (marker-buffer marker))
    (with-current-buffer (marker-buffer marker)
      (let ((followers (seq-filter (lambda (w) (= (window-point w) marker))
                                   (get-buffer-window-list nil nil t)))
            (inhibit-read-only t))
        (save-excursion
          (goto-char marker)
          (insert text))
        (dolist (w followers) (set-window-point w marker))))))

(defun arcology-oracle--answer-start (heading &optional buffer)
  "Add HEADING at the end of BUFFER (default: the answers buffer) and show it.
Return a marker, advancing with insertions, where the answer goes."
  (let ((buffer (or buffer (arcology-oracle--answer-buffer))))
    (with-current-buffer buffer
      (unless (derived-mode-p 'org-mode) (org-mode))
      (let ((inhibit-read-only t))
        (goto-char (point-max))
        (unless (bolp) (insert "\n"))
        (let ((start (point)))
          (insert "* " heading "\n")
          (set-window-start (display-buffer buffer) start))
        (copy-marker (point) t)))))

(defun arcology-oracle--stream-answer (marker path payload)
  "POST PAYLOAD to PATH and stream the answer in at MARKER, then its sources.
Failures are reported and noted in the buffer.  Returns the
request state."
  (let ((sources nil)
        (failed nil))
    (cl-flet ((finish (tail)
                (arcology-oracle--insert-following marker tail)
                (set-marker marker nil)))
      (arcology-oracle--ndjson
       "POST" path :json payload :timeout arcology-oracle-llm-timeout
       :on-event
       (lambda (event)
         (pcase (alist-get 'type event)
           ("sources" (setq sources (alist-get 'sources event)))
           ("token" (when-let ((text (alist-get 'text event)))
                      (arcology-oracle--insert-following marker text)))
           ("error" (setq failed (or (alist-get 'message event) "the daemon failed"))
            (arcology-oracle--report failed))))
       :on-done
       (lambda ()
         (finish (concat (if failed (format "\n\n[Failed: %s]" failed) "")
                         "\n\n** Sources\n"
                         (or (arcology-oracle--format-sources sources)
                             "- none: no notes were relevant enough\n"))))
       :errback
       (lambda (message)
         (arcology-oracle--report message)
         (finish (format "[Failed: %s]\n" message)))))))

(defun arcology-oracle--buffer-excerpt (beg end)
  "Return the text between BEG and END, cut around point when too long."
  (let ((max arcology-oracle-ask-max-chars))
    (if (<= (- end beg) max)
        (buffer-substring-no-properties beg end)
      (let ((start (max beg (min (- (point) (/ max 2)) (- end max)))))
        (buffer-substring-no-properties start (+ start max))))))

(defun arcology-oracle--saved-file ()
  "Return the file the current buffer visits, if saved; else nil.
The daemon reads files from disk, so an unsaved buffer is sent as
text only."
  (and buffer-file-name (not (buffer-modified-p)) buffer-file-name))

;;;###autoload
(defun arcology-oracle-ask (question &optional beg end)
  "Ask QUESTION about the current buffer, grounded in your notes.
With BEG and END, ask about that part of the buffer only.  The
answer streams into the `arcology-oracle-answer-buffer-name'
buffer, followed by its sources as id: links.  Returns at once."
  (interactive
   (list (read-string "Ask about this buffer: " nil 'arcology-oracle--ask-history)))
  (when (string-blank-p question) (user-error "Empty question"))
  (let ((text (save-restriction
                (widen)
                (arcology-oracle--buffer-excerpt (or beg (point-min)) (or end (point-max)))))
        (file (arcology-oracle--saved-file))
        (line (line-number-at-pos nil t))
        (marker (arcology-oracle--answer-start question)))
    (arcology-oracle--with-roam-dir
     (lambda (roam-dir)
       (let ((rel (arcology-oracle--relative-file file roam-dir)))
         (arcology-oracle--stream-answer
          marker "/ask"
          `((question . ,question)
            (buffer . ,text)
            ,@(when rel `((file . ,rel) (line . ,line)))
            ,@(when arcology-oracle-model `((model . ,arcology-oracle-model)))
            (stream . t))))))))

;;;###autoload
(defun arcology-oracle-ask-region (question beg end)
  "Ask QUESTION about the region from BEG to END, grounded in your notes."
  (interactive
   (if (use-region-p)
       (list (read-string "Ask about the region: " nil 'arcology-oracle--ask-history)
             (region-beginning) (region-end))
     (user-error "No active region")))
  (arcology-oracle-ask question beg end))

;;;; Summaries

(defvar arcology-oracle-summary-buffer-name "*arcology-oracle summary*"
  "Name of the org buffer showing summaries.")

;;;###autoload
(defun arcology-oracle-summarize (&optional question)
  "Summarize the org-roam node at point.
With a prefix argument, read a QUESTION to focus the summary on.
The summary streams into the `arcology-oracle-summary-buffer-name'
buffer, followed by its sources.  Returns at once."
  (interactive
   (list (when current-prefix-arg
           (read-string "Focus the summary on: " nil 'arcology-oracle--ask-history))))
  (let* ((context (and (derived-mode-p 'org-mode) (arcology-oracle--heading-context)))
         (id (plist-get context :node-id))
         (file (arcology-oracle--saved-file))
         (title (or (plist-get context :title) (buffer-name)))
         (question (and question (not (string-blank-p question)) question)))
    (unless (or id buffer-file-name)
      (user-error "No org-roam node at point"))
    (let ((buffer (get-buffer-create arcology-oracle-summary-buffer-name)))
      (with-current-buffer buffer
        (let ((inhibit-read-only t)) (erase-buffer)))
      (let ((marker (arcology-oracle--answer-start
                     (concat "Summary of " (org-link-display-format title)
                             (if question (format " (%s)" question) ""))
                     buffer)))
        (arcology-oracle--with-roam-dir
         (lambda (roam-dir)
           (let ((rel (arcology-oracle--relative-file file roam-dir)))
             (if (not (or id rel))
                 (progn
                   (arcology-oracle--insert-following marker "[Failed: not a note]\n")
                   (arcology-oracle--report
                    "no org-roam node at point, and the file is not among the notes"))
               (arcology-oracle--stream-answer
                marker "/summarize"
                `(,@(if id `((node . ,id)) `((file . ,rel)))
                  ,@(when question `((question . ,question)))
                  ,@(when arcology-oracle-model `((model . ,arcology-oracle-model)))
                  (stream . t)))))))))))

;;; Converse

(defvar arcology-oracle-answer-property "ORACLE_MODEL"
  "Property marking an answer heading inserted by `arcology-oracle-converse'.
The daemon writes it (with ROLE and CREATED) into every answer.")

(defun arcology-oracle--conversation-root ()
  "Move to the root heading of the conversation around point; return its level.
That is the nearest heading tagged `arcology-oracle-conversation-tag',
else the top-level heading around point."
  (org-back-to-heading t)
  (let ((found nil))
    (while (and (not found)
                (progn
                  (when (member arcology-oracle-conversation-tag (org-get-tags nil t))
                    (setq found t))
                  (and (not found) (org-up-heading-safe)))))
    (unless found
      (while (org-up-heading-safe)))
    (org-outline-level)))

(defun arcology-oracle--relevel (text level)
  "Return the org TEXT with its headings shifted so the first is at LEVEL."
  (let ((lines (split-string text "\n"))
        (top nil))
    (dolist (line lines)
      (when (string-match "\\`\\(\\*+\\) " line)
        (setq top (min (or top 1000) (length (match-string 1 line))))))
    (if (not top)
        (concat (make-string level ?*) " Answer\n" text)
      (let ((shift (- level top)))
        (mapconcat (lambda (line)
                     (if (string-match "\\`\\(\\*+\\) " line)
                         (concat (make-string (+ (length (match-string 1 line)) shift) ?*)
                                 (substring line (length (match-string 1 line))))
                       line))
                   lines "\n")))))

(defun arcology-oracle--insert-answer (root text model)
  "Insert the org heading TEXT as the last child of the heading at marker ROOT.
The insertion is one undoable change; point goes to the new
heading, which carries `arcology-oracle-answer-property' (MODEL
when the daemon did not set it)."
  (with-current-buffer (marker-buffer root)
    (save-restriction
      (widen)
      (let (pos)
        (undo-boundary)
        (let ((group (prepare-change-group)))
          (unwind-protect
              (progn
                (activate-change-group group)
                (goto-char root)
                (let ((level (org-outline-level)))
                  (org-end-of-subtree t t)
                  (unless (bolp) (insert "\n"))
                  (setq pos (point))
                  (insert (string-trim-right (arcology-oracle--relevel text (1+ level))) "\n")
                  (goto-char pos)
                  (unless (org-entry-get pos arcology-oracle-answer-property)
                    (org-entry-put pos arcology-oracle-answer-property (or model "unknown")))))
            (accept-change-group group)
            (undo-amalgamate-change-group group)))
        (undo-boundary)
        (goto-char pos)
        (dolist (w (get-buffer-window-list nil nil t))
          (set-window-point w pos))
        pos))))

;;;###autoload
(defun arcology-oracle-converse ()
  "Answer the org conversation around point with a new heading.
The conversation is the subtree of the nearest heading tagged
`arcology-oracle-conversation-tag' (else the top-level heading
around point); its child headings are the turns.  The daemon's
answer is inserted as the conversation's last child, as one
undoable change, and point moves to it.  Discard it with
`arcology-oracle-discard'.  Returns at once."
  (interactive)
  (unless (derived-mode-p 'org-mode) (user-error "Conversations live in org-mode buffers"))
  (save-excursion
    (save-restriction
      (widen)
      (when (org-before-first-heading-p)
        (user-error "Put point in the conversation's subtree"))
      (arcology-oracle--conversation-root)
      (let* ((root (copy-marker (point)))
             (text (buffer-substring-no-properties
                    (point) (save-excursion (org-end-of-subtree t t) (point)))))
        (message "arcology-oracle: thinking…")
        (arcology-oracle--json
         "POST" "/converse"
         :json `((org . ,text)
                 ,@(when arcology-oracle-model `((model . ,arcology-oracle-model))))
         :timeout arcology-oracle-llm-timeout
         :callback
         (lambda (answer)
           (let ((org (alist-get 'org answer)))
             (cond ((not (buffer-live-p (marker-buffer root))) nil)
                   ((not (and (stringp org) (not (string-blank-p org))))
                    (arcology-oracle--report "the daemon gave an empty answer"))
                   (t (arcology-oracle--insert-answer root org (alist-get 'model answer))
                      (message "arcology-oracle: answered (undo or M-x arcology-oracle-discard to drop it)")))
             (set-marker root nil)))
         :errback
         (lambda (message)
           (set-marker root nil)
           (arcology-oracle--report message)))))))

;;;###autoload
(defun arcology-oracle-discard ()
  "Delete the answer heading at point inserted by `arcology-oracle-converse'."
  (interactive)
  (unless (derived-mode-p 'org-mode) (user-error "Not in an org-mode buffer"))
  (save-excursion
    (when (org-before-first-heading-p) (user-error "No answer at point"))
    (org-back-to-heading t)
    (while (and (not (org-entry-get nil arcology-oracle-answer-property))
                (org-up-heading-safe)))
    (unless (org-entry-get nil arcology-oracle-answer-property)
      (user-error "No inserted answer at point"))
    (delete-region (point) (progn (org-end-of-subtree t t) (point)))))

;;; Search

(defvar arcology-oracle--search-history nil
  "Queries given to `arcology-oracle-search'.")

(defvar arcology-oracle--search-request nil
  "The search request in flight, if any.")

(defvar arcology-oracle--search-generation 0
  "Counter of searches; only the latest one prompts.")

(defun arcology-oracle--search-candidates (results)
  "Return an alist of (CANDIDATE . RESULT) for the search RESULTS.
Each candidate is unique: equal titles get their outline path."
  (let ((seen (make-hash-table :test 'equal)))
    (mapcar (lambda (result)
              (let* ((title (org-link-display-format (or (alist-get 'title result) "?")))
                     (outline (arcology-oracle--outline result))
                     (candidate (if (equal outline title) title
                                  (concat title " › " outline))))
                (while (gethash candidate seen)
                  (setq candidate (concat candidate " ")))
                (puthash candidate t seen)
                (cons candidate result)))
            results)))

(defun arcology-oracle--search-choose (query results)
  "Let the user choose among the search RESULTS for QUERY, then visit it."
  (if (null results)
      (message "arcology-oracle: nothing found for %S" query)
    (let* ((candidates (arcology-oracle--search-candidates results))
           (annotate (lambda (candidate)
                       (when-let ((result (cdr (assoc candidate candidates))))
                         (concat "  " (propertize (arcology-oracle--one-line
                                                   (alist-get 'snippet result) 70)
                                                  'face 'completions-annotations)))))
           (table (lambda (string pred action)
                    (if (eq action 'metadata)
                        `(metadata (category . arcology-oracle-note)
                                   (display-sort-function . identity)
                                   (annotation-function . ,annotate))
                      (complete-with-action action candidates string pred))))
           (choice (completing-read (format "Notes for %s: " query) table nil t)))
      (arcology-oracle--visit (cdr (assoc choice candidates))))))

;;;###autoload
(defun arcology-oracle-search (query)
  "Search the notes for QUERY and visit the result chosen.
The results are offered with `completing-read' (so vertico,
consult or icomplete show them if enabled) as soon as the daemon
answers; Emacs does not wait meanwhile."
  (interactive (list (read-string "Search notes: " nil 'arcology-oracle--search-history)))
  (when (string-blank-p query) (user-error "Empty query"))
  (arcology-oracle--http-cancel arcology-oracle--search-request)
  (message "arcology-oracle: searching…")
  (let ((generation (cl-incf arcology-oracle--search-generation)))
    ;; The roam directory is needed to visit results by file and line.
    (arcology-oracle--with-roam-dir
     (lambda (_roam-dir)
       (when (= generation arcology-oracle--search-generation)
         (setq arcology-oracle--search-request
               (arcology-oracle--json
                "GET" "/search"
                :query `(("q" ,query) ("k" ,arcology-oracle-result-count))
                :callback
                (lambda (answer)
                  (setq arcology-oracle--search-request nil)
                  (let ((results (alist-get 'results answer)))
                    (if (active-minibuffer-window)
                        (message "arcology-oracle: %d results for %S arrived while the minibuffer was busy"
                                 (length results) query)
                      ;; Out of the process sentinel, so that the prompt can be quit.
                      (run-at-time 0 nil (lambda ()
                                           (arcology-oracle--guard
                                             (arcology-oracle--search-choose query results)))))))
                :errback (lambda (message)
                           (setq arcology-oracle--search-request nil)
                           (arcology-oracle--report message)))))))))

;;; Key bindings

;;;###autoload
(defvar arcology-oracle-command-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "s") #'arcology-oracle-similar-show)
    (define-key map (kbd "m") #'arcology-oracle-similar-mode)
    (define-key map (kbd "a") #'arcology-oracle-ask)
    (define-key map (kbd "r") #'arcology-oracle-ask-region)
    (define-key map (kbd "u") #'arcology-oracle-summarize)
    (define-key map (kbd "c") #'arcology-oracle-converse)
    (define-key map (kbd "d") #'arcology-oracle-discard)
    (define-key map (kbd "f") #'arcology-oracle-search)
    map)
  "Keymap of the arcology-oracle commands, to bind under a prefix.
For example (global-set-key (kbd \"C-c o\") arcology-oracle-command-map).")
;;;###autoload
(fset 'arcology-oracle-command-map arcology-oracle-command-map)

;;; gptel

(defun arcology-oracle--auth-headers ()
  "Return the Authorization header for the daemon as an alist, or nil."
  (when-let ((token (arcology-oracle-auth-token)))
    `(("Authorization" . ,(concat "Bearer " token)))))

(defun arcology-oracle--gptel-set-models (backend models)
  "Give the gptel BACKEND the list of MODELS (symbols)."
  (let ((models (if (fboundp 'gptel--process-models)
                    (gptel--process-models models)
                  models)))
    ;; gptel is not loaded at compile time, so its struct accessor cannot
    ;; be a `setf' place here; set the slot by its offset.
    (aset backend (cl-struct-slot-offset 'gptel-backend 'models) models)))

(defun arcology-oracle--grounded-models (tags)
  "Return the names of the grounded models (\"M+notes\") in TAGS, else all.
TAGS is the daemon's answer to GET /api/tags."
  (let ((names (delq nil (mapcar (lambda (m) (alist-get 'name m))
                                 (alist-get 'models tags)))))
    (or (seq-filter (lambda (name) (string-match-p "\\+notes\\b" name)) names)
        names)))

;;;###autoload
(defun arcology-oracle-gptel-backend ()
  "Return a gptel backend that talks to the daemon's Ollama-compatible API.
The daemon answers from your notes.  Use it as:

  (setq gptel-backend (arcology-oracle-gptel-backend)
        gptel-model \\='llama3.2+notes)

The backend starts with `arcology-oracle-gptel-models' and takes
the daemon's grounded models (those named \"M+notes\" in its GET
/api/tags answer) when that arrives.  The
token header is computed for every request.  Requires gptel,
loaded only now."
  (require 'gptel-ollama nil t)
  (unless (fboundp 'gptel-make-ollama)
    (user-error "Install gptel first: arcology-oracle only configures it"))
  (let* ((url (url-generic-parse-url (arcology-oracle--base-url)))
         (backend (gptel-make-ollama "arcology-oracle"
                    :host (format "%s:%d" (url-host url) (url-port url))
                    :protocol (url-type url)
                    :endpoint (concat (string-remove-suffix
                                       "/" (or (car (url-path-and-query url)) ""))
                                      "/api/chat")
                    :header #'arcology-oracle--auth-headers
                    :stream t
                    :models (mapcar #'intern arcology-oracle-gptel-models))))
    (arcology-oracle--json
     "GET" "/api/tags"
     :callback (lambda (answer)
                 (when-let ((names (arcology-oracle--grounded-models answer)))
                   (arcology-oracle--gptel-set-models backend (mapcar #'intern names))))
     :errback #'ignore)
    backend))

(provide 'arcology-oracle)

;;; arcology-oracle.el ends here
