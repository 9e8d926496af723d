;;; arcology-oracle-http.el --- JSON and NDJSON requests to the arcology-oracle daemon -*- lexical-binding: t -*-

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

;; The requests every other part of the package makes of the daemon:
;; `arcology-oracle--json' (a JSON answer) and `arcology-oracle--ndjson'
;; (an answer streamed as JSON lines), on the HTTP client of
;; arcology-oracle-http-client.el.  They turn each failure (no
;; daemon, an HTTP error, a server that is not the daemon, malformed
;; JSON) into one short message.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'json)
(require 'arcology-oracle)
(require 'arcology-oracle-http-client)
(require 'arcology-oracle-http-errors)

;;; JSON

(defun arcology-oracle--json-parse (string)
  "Parse the JSON text STRING into alists, lists, nil and t.
JSON null and false both read as nil."
  (if (fboundp 'json-parse-string)
      (json-parse-string string :object-type 'alist :array-type 'list
                         :null-object nil :false-object nil)
    (let ((json-object-type 'alist) (json-array-type 'list)
          (json-key-type 'symbol) (json-false nil) (json-null nil))
      (json-read-from-string string))))

;;; Requests

(cl-defun arcology-oracle--json (method path &key query json timeout callback errback)
  "Send a JSON request to the daemon; return the request state.
METHOD, PATH, QUERY, JSON and TIMEOUT are as for
`arcology-oracle--http-request'.  CALLBACK is called with the
parsed answer of a 2xx response; ERRBACK with a short message for
every failure: unreachable daemon, HTTP error (with the daemon's
error text), malformed JSON, or a server that is not the daemon.
Without ERRBACK, failures are reported in the echo area."
  (let ((errback (or errback #'arcology-oracle--report)))
    (arcology-oracle--http-request
     method path :query query :json json :timeout timeout :accept "application/json"
     :on-error errback
     :on-done
     (lambda (status headers body)
       (let ((data (condition-case nil
                       (arcology-oracle--json-parse (decode-coding-string body 'utf-8))
                     (error :invalid))))
         (cond ((not (<= 200 status 299))
                (funcall errback (arcology-oracle--error-message status data body)))
               ((and (eq data :invalid)
                     (not (string-match-p "json" (or (arcology-oracle--content-type headers) ""))))
                (funcall errback (arcology-oracle--not-the-daemon
                                  (format "it answered HTTP %d with %s, not JSON" status
                                          (or (arcology-oracle--content-type headers)
                                              "no content type")))))
               ((eq data :invalid)
                (funcall errback "the daemon sent malformed JSON"))
               (t (funcall callback data))))))))

(cl-defun arcology-oracle--ndjson (method path &key json timeout on-event on-done errback)
  "Send a request whose answer streams as NDJSON; return the request state.
Each JSON line of a 2xx answer is parsed and passed to ON-EVENT as
soon as it is complete; ON-DONE runs after the last one.  ERRBACK
gets a short message for an unreachable daemon, an HTTP error, a
broken stream or a server that is not the daemon (a 2xx answer
that is not JSON: its lines are not read).  METHOD, PATH, JSON and
TIMEOUT are as for `arcology-oracle--http-request'."
  (let ((rest "")
        (errback (or errback #'arcology-oracle--report))
        (req nil))
    (cl-flet ((emit (line)
                (unless (string-blank-p line)
                  (let ((event (condition-case nil
                                   (arcology-oracle--json-parse (decode-coding-string line 'utf-8))
                                 (error nil))))
                    (if (consp event)
                        (funcall on-event event)
                      (arcology-oracle--report "skipped a malformed line from the daemon" t))))))
      (setq req
            (arcology-oracle--http-request
             method path :json json :timeout timeout :accept "application/x-ndjson"
             :on-error errback
             :on-data
             (lambda (bytes)
               (let ((type (arcology-oracle--content-type (arcology-oracle--http-headers req))))
                 (if (not (string-match-p "json" (or type "")))
                     ;; Not the daemon: a page, say.  Stop here, once.
                     (progn
                       (arcology-oracle--http-cancel req)
                       (funcall errback
                                (arcology-oracle--not-the-daemon
                                 (format "it answered HTTP %d with %s, not a stream of JSON lines"
                                         (arcology-oracle--http-status req)
                                         (or type "no content type")))))
                   ;; Split on raw newlines: a newline byte never occurs
                   ;; inside a multibyte UTF-8 sequence.
                   (let ((lines (split-string (concat rest bytes) "\n")))
                     (setq rest (car (last lines)))
                     (mapc #'emit (butlast lines))))))
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
                                    body)))))))))

(provide 'arcology-oracle-http)

;;; arcology-oracle-http.el ends here
