;;; arcology-oracle-similar-place.el --- Where the similar notes window goes, by the frame's width -*- lexical-binding: t -*-

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

;; The similar notes window beside the note on a wide frame, below it
;; on a narrow one (`arcology-oracle-similar-min-frame-width'), and
;; moved from the one place to the other when the frame is resized
;; across that width: a terminal or tmux pane made narrower or wider,
;; a frame dragged.  Beside the note means below the org-roam buffer,
;; in its column, when that is shown.  Asking for the list and
;; following point is arcology-oracle-similar.el's.

;;; Code:

(require 'seq)
(require 'arcology-oracle-notes)
(require 'arcology-oracle-similar-buffer)

(defcustom arcology-oracle-similar-min-frame-width 80
  "The narrowest frame, in columns, that shows the similar notes beside the note.
On a narrower frame a side window on the right or left (where
`arcology-oracle-similar-display-action' puts it by default) would
be too narrow to read a title in: the list goes below the note
instead, a side window at the bottom as wide as the frame.  A frame
resized across this width moves the list.  nil: always where
`arcology-oracle-similar-display-action' says."
  :type '(choice (const :tag "Always beside" nil) integer)
  :group 'arcology-oracle)

(defun arcology-oracle--similar-below-p (&optional frame)
  "Return non-nil when FRAME has the similar notes below the note.
FRAME is the selected one by default.  That is when
`arcology-oracle-similar-display-action' is a side window on the
right or left and FRAME is narrower than
`arcology-oracle-similar-min-frame-width'."
  (let ((action arcology-oracle-similar-display-action))
    (and arcology-oracle-similar-min-frame-width
         (< (frame-width frame) arcology-oracle-similar-min-frame-width)
         (memq #'display-buffer-in-side-window
               (let ((functions (car action))) (if (functionp functions) (list functions) functions)))
         (memq (alist-get 'side (cdr action)) '(left right)))))

(defun arcology-oracle--similar-place (&optional frame)
  "Return the `display-buffer' action showing the similar notes in FRAME.
FRAME is the selected one by default.  Below the note on a frame
too narrow for the list beside it (see
`arcology-oracle--similar-below-p'): a side window at the bottom, in
the slot left of the answers' (their default is slot 0), a third of
the frame high, as wide as the frame.  Else, when the org-roam
buffer is shown, the list shares its place, below it (the next slot
of its side window, or the lower half of its window), so that the
note keeps its width; else `arcology-oracle-similar-display-action'."
  (let ((roam (arcology-oracle--similar-roam-window frame)))
    (cond
     ((arcology-oracle--similar-below-p frame)
      '(display-buffer-in-side-window (side . bottom) (slot . -1) (window-height . 0.3)))
     ((null roam) arcology-oracle-similar-display-action)
     ((window-parameter roam 'window-side)
      `(display-buffer-in-side-window
        (side . ,(window-parameter roam 'window-side))
        (slot . ,(1+ (or (window-parameter roam 'window-slot) 0)))))
     ;; Half of the org-roam window, not of the frame (0.5): at 80x24 org-roam's
     ;; window, split below the note, was left one line high.
     (t `(display-buffer-in-direction
          (window . ,roam) (direction . below)
          (window-height . ,(max window-min-height (/ (window-total-height roam) 2))))))))

(defun arcology-oracle--similar-roam-window (&optional frame)
  "Return the window of FRAME showing the org-roam buffer, or nil.
FRAME is the selected one by default."
  (seq-find (lambda (w) (with-current-buffer (window-buffer w)
                          (derived-mode-p 'org-roam-mode)))
            (window-list frame 'no-minibuffer)))

(defun arcology-oracle--similar-placed (window)
  "Have WINDOW, the similar list's, follow its frame's width from now on.
Only a window made for the list (a side window, or one split off for
it, as below the org-roam buffer) is moved: a list the user put in a
window of theirs stays there.  Whether its frame had the list below
the note (`arcology-oracle--similar-below-p') is recorded, and its
frame's resizes are watched until no window so placed shows the list
any more (see `arcology-oracle--similar-frame-resized')."
  (when (and (window-live-p window)
             (or (window-parameter window 'window-side)
                 (eq (car (window-parameter window 'quit-restore)) 'window)))
    ;; In a list, so that a window placed beside the note has a parameter too.
    (set-window-parameter window 'arcology-oracle-similar-below
                          (list (and (arcology-oracle--similar-below-p (window-frame window)) t)))
    (add-hook 'window-size-change-functions #'arcology-oracle--similar-frame-resized)))

(defun arcology-oracle--similar-frame-resized (frame)
  "Move the similar list of FRAME where it would open now, by its width.
In the global `window-size-change-functions', run after a redisplay
in which a window of FRAME changed its size or buffer, or was added:
a frame resized across `arcology-oracle-similar-min-frame-width'
moves the list to `arcology-oracle--similar-place' (see
`arcology-oracle--similar-move'), beside the note or the org-roam
buffer, or below the note.  Anything else (the org-roam buffer shown
or hidden, a window resized by hand) leaves it where it is.  Once no
window placed by `arcology-oracle--similar-placed' shows the list (it
was quit: the other windows grew), it removes itself from the hook."
  (arcology-oracle--guard
    (let ((windows (when-let ((list (get-buffer arcology-oracle-similar-buffer-name)))
                     (seq-filter (lambda (w) (window-parameter w 'arcology-oracle-similar-below))
                                 (get-buffer-window-list list nil t)))))
      (if (null windows)
          (remove-hook 'window-size-change-functions #'arcology-oracle--similar-frame-resized)
        (dolist (window windows)
          (when (and (eq (window-frame window) frame)
                     (not (eq (car (window-parameter window 'arcology-oracle-similar-below))
                              (and (arcology-oracle--similar-below-p frame) t))))
            (arcology-oracle--similar-move window (arcology-oracle--similar-place frame))))))))

(defun arcology-oracle--similar-move (window place)
  "Move the similar list of WINDOW, made for it, to PLACE.
PLACE is a `display-buffer' action; WINDOW is deleted.  The list
keeps its buffer, contents and point, and nothing is asked of the
daemon.  The selected window stays selected (the list's new window
when it was the list's): the cursor stays in the note being read."
  (let* ((frame (window-frame window))
         (buffer (window-buffer window))
         (point (window-point window))
         (selected (eq window (frame-selected-window frame))))
    (with-selected-frame frame
      (delete-window window)
      (when-let ((new (arcology-oracle--display buffer place selected)))
        (set-window-point new point)
        ;; Made within `window-size-change-functions', the new window is
        ;; not reported to them: its list is laid out for its width here.
        (arcology-oracle--similar-resized new)
        (arcology-oracle--similar-placed new)))))

(provide 'arcology-oracle-similar-place)

;;; arcology-oracle-similar-place.el ends here
