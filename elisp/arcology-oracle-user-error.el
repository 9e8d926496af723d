;;; arcology-oracle-user-error.el --- The package's user errors, named as its messages are -*- lexical-binding: t -*-

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

;; A command's refusal (`user-error') reads in *Messages* as the
;; package's own messages do, "arcology-oracle: ...", wherever it is
;; signalled from: see `arcology-oracle--user-error'.

;;; Code:

(defconst arcology-oracle--signal-user-error
  (lambda (message) (signal 'user-error (list message)))
  "Signal a `user-error' with MESSAGE from a frame that has no name.
Called through this variable, so that the byte compiler does not
inline it: see `arcology-oracle--user-error'.")

(defun arcology-oracle (message)
  "Signal a `user-error' with MESSAGE from a command run in the minibuffer.
There `minibuffer-error-function' writes into *Messages* whatever
signalled the error before the message, an anonymous function too
\(\"(closure (t) (message) ...): \"): this function's name reads as
the package's own messages do, \"arcology-oracle: No active region\"."
  (signal 'user-error (list message)))

(defun arcology-oracle--user-error (format &rest args)
  "Signal a `user-error' whose message is FORMAT with ARGS, as `user-error' does.
Emacs writes a command's error into *Messages* after the name of
the function that signalled it.  When the package runs from its
.el files (as the README's set-up loads it), that is the innermost
special form, \"if: Install gptel first\"; signalled from an
anonymous function, *Messages* shows the message alone, as the
echo area does, whether the package is compiled or not.  In the
minibuffer, see `arcology-oracle'."
  (let ((message (apply #'format-message format args)))
    (if (minibufferp (window-buffer))
        (arcology-oracle message)
      (funcall arcology-oracle--signal-user-error message))))

(provide 'arcology-oracle-user-error)

;;; arcology-oracle-user-error.el ends here
