;;; arcology-oracle-http-parse.el --- Reading the HTTP responses of the arcology-oracle daemon -*- lexical-binding: t -*-

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

;; The state of one HTTP exchange with the daemon, and the parser that
;; reads its response as the bytes arrive, split anywhere: the status
;; line and headers, then a body framed by length, chunked, or running
;; until the connection closes.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'arcology-oracle-instance)

(cl-defstruct (arcology-oracle--http
               (:constructor arcology-oracle--http-create)
               (:copier nil))
  "The state of one HTTP exchange with the daemon."
  process timer timeout (last-activity (float-time))
  base                                  ; the daemon's URL, for messages
  connect-timeout                       ; seconds allowed to open the connection
  connected                             ; non-nil once the connection opened
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
      (arcology-oracle--check-instance (arcology-oracle--http-base req)
                                       (cdr (assoc "x-arcology-oracle-instance" headers)))
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

(provide 'arcology-oracle-http-parse)

;;; arcology-oracle-http-parse.el ends here
