;;; arcology-oracle-windows.el --- Where arcology-oracle shows its buffers -*- lexical-binding: t -*-

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

;; Displaying the package's lists and answers: in the side window an
;; option names, beside the list being read rather than in its place,
;; and alone in the frame for `delete-other-windows'.

;;; Code:

(defun arcology-oracle--delete-other-windows (window)
  "Show WINDOW's buffer alone in its frame, for \\[delete-other-windows].
The `delete-other-windows' parameter of the package's side windows:
Emacs cannot make a side window the only window, so the buffer
moves to the frame's main window and every other window goes;
\\[quit-window] there brings back the note that was shown."
  (let ((buffer (window-buffer window))
        (main (window-main-window (window-frame window))))
    (select-window main)
    (delete-other-windows main)
    (switch-to-buffer buffer nil t)
    nil))

(defun arcology-oracle--beside-selected (buffer action)
  "Return ACTION, made not to show BUFFER in the selected window.
A side window ACTION would use again (its side and slot) that is
selected and shows another buffer is the list or answer being read:
\\[arcology-oracle-ask] in the link suggestions put the answers in
their place, the suggestions gone and the answers selected.  The
next slot of that side is used instead, the two side by side, the
list still selected."
  (let* ((window (selected-window))
         (side (window-parameter window 'window-side))
         (functions (car action))
         (alist (cdr action)))
    (if (and side
             (not (eq (window-buffer window) buffer))
             (memq #'display-buffer-in-side-window
                   (if (functionp functions) (list functions) functions))
             (eq side (alist-get 'side alist 'bottom))
             (eql (window-parameter window 'window-slot) (alist-get 'slot alist 0)))
        (cons functions (cons (cons 'slot (1+ (or (window-parameter window 'window-slot) 0))) alist))
      action)))

(defun arcology-oracle--display (buffer action &optional select)
  "Display BUFFER with the `display-buffer' ACTION; return its window.
A window of the selected frame already showing BUFFER is used
again.  SELECT non-nil selects the window too (the user goes to
that list); without it, a selected side window is not made to show
BUFFER in place of its own (see `arcology-oracle--beside-selected').
A side window so made answers \\[delete-other-windows] with
`arcology-oracle--delete-other-windows'."
  (let* ((action (if select action (arcology-oracle--beside-selected buffer action)))
         (functions (car action))
         (window (display-buffer
                  buffer (cons (cons #'display-buffer-reuse-window
                                     (if (functionp functions) (list functions) functions))
                               (cdr action)))))
    (when (and window (window-parameter window 'window-side))
      (set-window-parameter window 'delete-other-windows #'arcology-oracle--delete-other-windows))
    (when (and window select) (select-window window))
    window))

(provide 'arcology-oracle-windows)

;;; arcology-oracle-windows.el ends here
