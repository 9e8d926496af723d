;;; arcology-oracle-gptel-backend.el --- A gptel backend talking to the arcology-oracle daemon -*- lexical-binding: t -*-

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

;; gptel (https://github.com/karthink/gptel) is optional: loading this
;; file does not load it.  `arcology-oracle-gptel-backend' returns a
;; gptel backend that talks to the daemon's Ollama-compatible API,
;; whose "M+notes" models answer from the notes; it offers the daemon's
;; grounded models once its GET /api/tags answers.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)
(require 'url-parse)
(require 'arcology-oracle-http)

(declare-function gptel-make-ollama "ext:gptel-ollama" (name &rest args))
(declare-function gptel--process-models "ext:gptel" (models))

(defun arcology-oracle--auth-headers (&optional _info)
  "Return the Authorization header for the daemon as an alist, or nil.
gptel 0.9.9.5 and later call it with their request's state, INFO
\(unused); older ones with nothing."
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

(defvar gptel-model)
(defvar gptel-backend)

(defun arcology-oracle--gptel-say-missing (backend names &optional buffer)
  "Say when gptel's model is not among NAMES, the models of BACKEND now.
gptel then quietly takes the first of NAMES instead, which may not
answer from the notes at all: the message names the model missing,
the one gptel takes, and how to get the missing one.  Only when
BACKEND is gptel's backend (or none is set yet).  gptel's model and
backend are read in BUFFER when it is live (gptel sets them per
buffer: `gptel-menu', or `setq-local' in a chat), else in the
selected window's buffer: where the user works."
  (let* ((buffer (if (buffer-live-p buffer) buffer (window-buffer (selected-window))))
         (value (lambda (var) (and (boundp var) (buffer-local-value var buffer))))
         (wanted (format "%s" (or (funcall value 'gptel-model)
                                  (car arcology-oracle-gptel-models))))
         (picked (car names)))
    (when (and (memq (funcall value 'gptel-backend) (list nil backend))
               (not (member wanted names)))
      (arcology-oracle--message "arcology-oracle: the daemon offers no %s model%s, so gptel uses %s%s"
                                wanted
                                (if (string-suffix-p "+notes" wanted)
                                    (format " (ollama pull %s on the daemon's Ollama adds it)"
                                            (string-remove-suffix "+notes" wanted))
                                  "")
                                picked
                                (if (string-match-p "\\+notes\\b" picked)
                                    ""
                                  ", which does not answer from your notes")))))

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
    (arcology-oracle--user-error "Install gptel first: arcology-oracle only configures it"))
  (let* ((url (url-generic-parse-url (arcology-oracle--base-url)))
         (buffer (current-buffer))  ; its model may be its own (`setq-local')
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
                   (arcology-oracle--gptel-set-models backend (mapcar #'intern names))
                   (arcology-oracle--gptel-say-missing backend names buffer)))
     :errback #'ignore)
    backend))

(provide 'arcology-oracle-gptel-backend)

;;; arcology-oracle-gptel-backend.el ends here
