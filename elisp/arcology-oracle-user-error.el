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
;; signalled from: see `arcology-oracle--user-error'.  In the echo area
;; it is broken between words, as the package's messages are: Emacs,
;; which shows it, broke it at the last column, mid-word ("suggestions
;; ar\" then "e for a note as saved"): see
;; `arcology-oracle--show-refusal'.  At a prompt, where Emacs shows
;; it after what was typed, it is broken between words too: see
;; `arcology-oracle--show-refusal-at-prompt'.

;;; Code:

(require 'arcology-oracle-echo)

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
minibuffer, see `arcology-oracle'.  The message is marked as the
package's, for `arcology-oracle--show-refusal'."
  (let ((message (propertize (apply #'format-message format args) 'arcology-oracle-refusal t)))
    (if (minibufferp (window-buffer))
        (arcology-oracle message)
      (funcall arcology-oracle--signal-user-error message))))

(defun arcology-oracle--read-string (prompt &optional history)
  "Read a string with PROMPT and HISTORY, as `read-string' does.
Refused when a prompt is open already and Emacs allows no other in
it (`enable-recursive-minibuffers'): a command of the package that
asks something, its key typed while \\[find-file] asks for a file,
failed in Emacs's words, \"Command attempted to use minibuffer while
in minibuffer\", see `arcology-oracle--refuse-nested-prompt'."
  (arcology-oracle--refuse-nested-prompt)
  (read-string prompt nil history))

(defun arcology-oracle--refuse-nested-prompt ()
  "Signal a `user-error' when a prompt is open and may hold no other.
The refusal says to answer or quit that prompt first, then to type
the command's keys again."
  (when (and (active-minibuffer-window) (not enable-recursive-minibuffers))
    (arcology-oracle--user-error "A prompt is open already: answer it or quit it (%s), then %s again"
                                 (substitute-command-keys "\\<global-map>\\[keyboard-quit]")
                                 (key-description (this-command-keys)))))

(defun arcology-oracle--refusal-of (data)
  "Return the message of DATA, an error, when it is the package's refusal.
A `user-error' of `arcology-oracle--user-error', without its marks;
else nil."
  (and (eq (car-safe data) 'user-error)
       (stringp (cadr data))
       (get-text-property 0 'arcology-oracle-refusal (cadr data))
       (substring-no-properties (cadr data))))

(defun arcology-oracle--show-refusal (show data context signal)
  "Show the error DATA as SHOW, a `command-error-function', does.
A refusal of `arcology-oracle--user-error' is then shown again with
`arcology-oracle--message': in whole words, no taller than the echo
area, and logged once, alone, in *Messages*.  CONTEXT and SIGNAL as
SHOW's; other errors are SHOW's alone."
  (let ((refusal (arcology-oracle--refusal-of data)))
    (if (not refusal)
        (funcall show data context signal)
      (let ((message-log-max nil))
        (funcall show data context signal))
      (arcology-oracle--message "%s" refusal))))

(defun arcology-oracle--show-refusal-at-prompt (show data context caller)
  "Show the error DATA as SHOW, `minibuffer-error-function', does.
In an active minibuffer, whose buffer-local `command-error-function'
that is, Emacs shows an error after the prompt and what was typed, as
\" [CONTEXT MESSAGE]\", and broke a refusal too long for the line
mid-word.  A refusal of `arcology-oracle--user-error' is shown there
as SHOW shows it (a beep, then `minibuffer-message'), broken between
words instead (see `arcology-oracle--echo-lines'), and logged in
*Messages* on one line, after CALLER's name as SHOW logs it.  Other
errors are SHOW's alone."
  (let ((refusal (arcology-oracle--refusal-of data)))
    (if (not refusal)
        (funcall show data context caller)
      (let ((text (concat context refusal)))
        (discard-input)
        (ding)
        (arcology-oracle--log-message (if caller (format "%s: %s" caller text) text))
        (minibuffer-message "%s" (apply #'propertize (or (arcology-oracle--echo-lines text) text)
                                        minibuffer-prompt-properties))))))

(add-function :around command-error-function #'arcology-oracle--show-refusal)
(advice-add 'minibuffer-error-function :around #'arcology-oracle--show-refusal-at-prompt)

(defun arcology-oracle-user-error-unload-function ()
  "Take the package's refusals off `command-error-function' and the minibuffer's.
Return nil: unloading goes on as usual."
  (remove-function command-error-function #'arcology-oracle--show-refusal)
  (advice-remove 'minibuffer-error-function #'arcology-oracle--show-refusal-at-prompt)
  nil)

(provide 'arcology-oracle-user-error)

;;; arcology-oracle-user-error.el ends here
