;;; arcology-oracle-token.el --- The daemon's URL and bearer token for arcology-oracle -*- lexical-binding: t -*-

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

;; The daemon's base URL (`arcology-oracle-url') and the bearer token
;; sent to it (`arcology-oracle-token', or looked up with auth-source and
;; remembered until the daemon refuses it or
;; `arcology-oracle-forget-token'), and what to do when it is refused.

;;; Code:

(require 'seq)
(require 'subr-x)
(require 'url-parse)
(require 'auth-source)
(require 'arcology-oracle)

(defvar arcology-oracle--token-cache nil
  "Alist of (URL . TOKEN) found with auth-source; TOKEN :none when absent.")

(defun arcology-oracle--base-url ()
  "Return `arcology-oracle-url' without a trailing slash."
  (string-remove-suffix "/" arcology-oracle-url))

(defun arcology-oracle--auth-source-spec (url)
  "Return the `auth-source-search' spec of the token for the daemon at URL."
  (let* ((parsed (url-generic-parse-url url))
         (port (url-port parsed)))
    (list :host (url-host parsed) :port (list port (number-to-string port))
          :require '(:secret) :max 10)))

(defun arcology-oracle--token-refused ()
  "Look the token up again at the next request: the daemon answered 401.
A token found, or none found, is remembered (auth-source remembers
that there was none too), so a line added to ~/.authinfo after the
first refusal was never read until \[arcology-oracle-forget-token]."
  (let ((url (arcology-oracle--base-url)))
    (when (assoc url arcology-oracle--token-cache)
      (setq arcology-oracle--token-cache (assoc-delete-all url arcology-oracle--token-cache))
      (auth-source-forget (arcology-oracle--auth-source-spec url)))))

(defun arcology-oracle--unauthorized-message ()
  "Return what to do about a 401 of the daemon, naming the auth-source entry.
The entry is looked up by the host and port of `arcology-oracle-url'
\(\"localhost\" is not \"127.0.0.1\" there): the message says which."
  (let* ((url (url-generic-parse-url (arcology-oracle--base-url)))
         (entry (format "machine %s port %d password TOKEN" (url-host url) (url-port url))))
    (if (arcology-oracle-auth-token)
        (format "unauthorized: the daemon refused the token sent (`arcology-oracle-token' or \"%s\")"
                entry)
      (format "unauthorized: set `arcology-oracle-token' or add \"%s\" to ~/.authinfo" entry))))

(defun arcology-oracle--auth-source-token (url)
  "Return the token for the daemon at URL from `auth-source', or nil."
  (let ((cached (assoc url arcology-oracle--token-cache)))
    (if cached
        (and (stringp (cdr cached)) (cdr cached))
      (let* ((port (url-port (url-generic-parse-url url)))
             (entries (apply #'auth-source-search (arcology-oracle--auth-source-spec url)))
             ;; A line without a port matches every port: one that names the
             ;; daemon's wins, wherever it is in the file.
             (found (or (seq-find (lambda (e) (member (plist-get e :port)
                                                       (list port (number-to-string port))))
                                  entries)
                        (car entries)))
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

;;;###autoload
(defun arcology-oracle-forget-token ()
  "Forget the tokens found with auth-source; look them up again when needed."
  (interactive)
  (setq arcology-oracle--token-cache nil)
  (auth-source-forget-all-cached))

(provide 'arcology-oracle-token)

;;; arcology-oracle-token.el ends here
