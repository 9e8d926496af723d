;;; arcology-oracle-links.el --- Link suggestions for the note at point -*- lexical-binding: t -*-

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

;; Putting links in, the step after "related":
;; `arcology-oracle-suggest-links' lists the notes the current note
;; does not link to yet (GET /suggest-links), each with the paragraph
;; of this note where the link belongs: RET visits, i inserts the link
;; there, x rejects the suggestion for good (see
;; arcology-oracle-rejections.el), g asks again.  The list's buffer is
;; arcology-oracle-links-buffer.el's, the link's place
;; arcology-oracle-link-place.el's; i in the similar notes is
;; arcology-oracle-similar-links.el's.

;;; Code:

(require 'cl-lib)
(require 'seq)
(require 'subr-x)
(require 'org)
(require 'arcology-oracle-http)
(require 'arcology-oracle-notes)
(require 'arcology-oracle-link-place)
(require 'arcology-oracle-links-buffer)

(defun arcology-oracle--links-request (source node title)
  "Ask the daemon for link suggestions for NODE (titled TITLE) of SOURCE."
  (arcology-oracle--links-render source node title "Looking for links to add…")
  (arcology-oracle--json
   "GET" "/suggest-links"
   :query `(("node" ,node) ("k" ,arcology-oracle-result-count) ("all" "true"))
   :callback (lambda (answer)
               (arcology-oracle--links-render source node title (arcology-oracle--results-of answer 'suggestions)))
   :errback (lambda (message)
              ;; The daemon does not know the node: a note saved a moment ago
              ;; (not indexed yet), or edited out of its ID.  Its own words are
              ;; "no node with ID '5e1f...' in the index (HTTP 404)".
              (let ((again (substitute-command-keys
                            "\\<arcology-oracle-links-mode-map>\\[arcology-oracle-links-refresh]")))
                (cond ((string-suffix-p "(HTTP 404)" message)
                       (setq message (format "%s is not in the daemon's index (yet): save the note, then %s asks again"
                                             title again)))
                      ;; A 409 says whether asking again can help (the note changed since it was indexed).
                      ((arcology-oracle--retry-p message)
                       (setq message (arcology-oracle--refusal "No suggestions" message again)))))
              (arcology-oracle--links-render source node title message)
              (arcology-oracle--report message))))

;;;###autoload
(defun arcology-oracle-suggest-links ()
  "List the notes the note at point does not link to yet, and where.
The note is the org-roam node around point (a heading with an ID,
else the file's).  Each suggestion shows the paragraph of this note
where its link belongs.  A file outside the daemon's roam directory
is not among its notes: that is said, as by
`arcology-oracle-summarize', and nothing is asked (see
`arcology-oracle--among-notes'; the list may then appear once the
daemon has said where its notes are).  A private note (see
`arcology-oracle--private-here-p') is refused: the daemon never
reads it."
  (interactive)
  (unless (arcology-oracle--in-listed-note #'arcology-oracle-suggest-links)
    (arcology-oracle--suggest-links-here)))

(defun arcology-oracle--suggest-links-here ()
  "List the links the note at point lacks, as `arcology-oracle-suggest-links'."
  (unless (derived-mode-p 'org-mode) (arcology-oracle--user-error "Link suggestions need an Org buffer"))
  (arcology-oracle--refuse-without-file "suggestions are for a note as saved")
  (pcase-let ((`(,node . ,title) (arcology-oracle--node-at-point))
              (own (arcology-oracle--enclosing-ids))
              (source (current-buffer)))
    (when (arcology-oracle--node-private-p)
      (arcology-oracle--user-error "%s is private: the daemon never reads it, no link suggestions for it"
                                   (arcology-oracle--title-text (or title (arcology-oracle--file-title)))))
    (cl-flet ((show (fill)
                ;; Set up the suggestions buffer, FILL it, show it.
                (when (buffer-live-p source)
                  (with-current-buffer (get-buffer-create arcology-oracle-links-buffer-name)
                    (unless (derived-mode-p 'arcology-oracle-links-mode) (arcology-oracle-links-mode))
                    (setq arcology-oracle--links-own own))
                  (funcall fill)
                  (arcology-oracle--display (get-buffer arcology-oracle-links-buffer-name)
                                            arcology-oracle-result-display-action t))))
      (arcology-oracle--among-notes
       (arcology-oracle--visited-file) ": no link suggestions for it"
       (lambda (_rel)
         (unless node
           (arcology-oracle--user-error "No org-roam node here: the heading or file needs an :ID: (%s adds one)"
                                        (substitute-command-keys "\\[org-id-get-create]")))
         (when (buffer-live-p source)  ; this may run once the daemon said where its notes are
           (with-current-buffer source
             (let ((file (arcology-oracle--visited-file)))
               (when (and file (not (file-exists-p file)))
                 (arcology-oracle--missing-file-error file "Save %s first: suggestions are for a note as saved")))))
         (when (and (buffer-live-p source) (buffer-modified-p source))
           (arcology-oracle--message "arcology-oracle: suggestions read the saved file; save to place links in new text"))
         (show (lambda () (arcology-oracle--links-request source node title))))
       nil
       (lambda (message)
         ;; The daemon could not say where its notes are: it cannot be asked either.
         (when node (show (lambda () (arcology-oracle--links-render source node title message))))
         (arcology-oracle--report message))))))

(defun arcology-oracle-links-refresh ()
  "Ask again for the link suggestions of this buffer's note."
  (interactive)
  (arcology-oracle--links-request arcology-oracle--links-source arcology-oracle--links-node
                                  (arcology-oracle--links-title)))

(defun arcology-oracle-links-insert ()
  "Insert the link of the suggestion at point into its paragraph of the note.
The note is shown with point at the paragraph first; the link goes
at the paragraph's end, as one undo step.  A narrowed note stays
narrowed: a paragraph outside the part shown is refused, as is a
link to the note itself."
  (interactive)
  (let* ((suggestion (arcology-oracle--result-at-point))
         (link (arcology-oracle--link-for suggestion))
         (target (alist-get 'node_id suggestion))
         (own arcology-oracle--links-own)
         (source arcology-oracle--links-source)
         (list-buffer (current-buffer))
         (line nil))
    (unless (buffer-live-p source) (arcology-oracle--user-error "The note's buffer is gone"))
    (pcase-let ((`(,pos ,own-line)
                 (with-current-buffer source
                   (when buffer-read-only (arcology-oracle--user-error "Buffer %s is read-only" (buffer-name)))
                   (arcology-oracle--suggestion-place suggestion))))
      (with-current-buffer source
        (when (or (member target own)
                  (member target (save-excursion (save-restriction (widen) (goto-char pos)
                                                                   (arcology-oracle--enclosing-ids)))))
          (arcology-oracle--user-error "That is the note you are in: no link to itself"))
        (unless (<= (point-min) pos (point-max))
          (arcology-oracle--user-error
           "That paragraph, line %d, is outside the narrowed part of %s: %s, then insert again"
           (save-restriction (widen) (line-number-at-pos pos)) (buffer-name)
           (substitute-command-keys "\\[widen] widens"))))
      (let ((window (display-buffer source '((display-buffer-reuse-window display-buffer-use-some-window) (inhibit-same-window . t)))))
        (with-current-buffer source
          (goto-char pos)
          (when (derived-mode-p 'org-mode) (org-show-context))
          (arcology-oracle--insert-link-here link own-line)
          (when window (arcology-oracle--point-after-link window))
          (setq line (line-number-at-pos nil t)))))  ; the file's, narrowed or not
    (arcology-oracle--links-remove list-buffer target)
    (arcology-oracle--message "Inserted a link to \"%s\" into %s, line %d" (org-link-display-format link) (buffer-name source) line)))

(defun arcology-oracle--links-remove (buffer node &optional forget)
  "Remove the suggestions of NODE from the suggestions BUFFER.
The list is rendered again, so that the count of those below the
relevance cut stays true; point goes to the entry that took the
place of the one it was on.  FORGET (a rejection) drops NODE from
the daemon's list kept to render it again; else (a link inserted)
it stays there and the note's link keeps it out, so that undoing
the link offers it again."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (let ((index 0) (pos (point-min)) (line (line-number-at-pos)) at done)
        ;; The entry point is on, counted among those left (nil above the first).
        (while (and (not done) (setq pos (next-single-property-change pos 'arcology-oracle-entry)))
          (when (get-text-property pos 'arcology-oracle-entry)
            (let ((end (or (next-single-property-change pos 'arcology-oracle-result) (point-max))))
              (cond ((< (point) pos) (setq done t))
                    ((< (point) end) (setq at index done t))
                    ((not (equal (alist-get 'node_id (get-text-property pos 'arcology-oracle-result)) node))
                     (cl-incf index)))
              (setq pos end))))
        (when forget
          (setq arcology-oracle--links-last
                (seq-remove (lambda (s) (equal (alist-get 'node_id s) node)) arcology-oracle--links-last)))
        (arcology-oracle--links-render arcology-oracle--links-source arcology-oracle--links-node
                                       (arcology-oracle--links-title) arcology-oracle--links-last)
        (goto-char (point-min))
        (if (not at)
            (forward-line (1- line))
          (dotimes (_ (1+ at))
            (let ((next (next-single-property-change (point) 'arcology-oracle-entry)))
              (when (and next (not (get-text-property next 'arcology-oracle-entry)))
                (setq next (next-single-property-change next 'arcology-oracle-entry)))
              (when next (goto-char next)))))
        (when-let ((window (get-buffer-window buffer t)))
          (set-window-point window (point)))))))

(provide 'arcology-oracle-links)

;;; arcology-oracle-links.el ends here
