;;; arcology-oracle-rejections.el --- Rejecting link suggestions, and taking rejections back -*- lexical-binding: t -*-

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

;; In the link suggestions buffer, x rejects a suggestion for good
;; (POST /suggest-links/reject) and u takes the last rejection back;
;; `arcology-oracle-link-rejections' (R there) lists the rejections of
;; a note (GET /suggest-links/rejections), each of which u takes back
;; (DELETE /suggest-links/rejections).

;;; Code:

(require 'cl-lib)
(require 'url-util)
(require 'org)
(require 'arcology-oracle-http)
(require 'arcology-oracle-notes)
(require 'arcology-oracle-links)

(declare-function arcology-oracle-similar-next "arcology-oracle-similar-buffer" ())
(declare-function arcology-oracle-similar-previous "arcology-oracle-similar-buffer" ())

(defvar-local arcology-oracle--links-rejected nil
  "In the suggestions buffer: the suggestions rejected there, newest first.")

(defun arcology-oracle-links-reject ()
  "Reject the suggestion at point: the daemon never suggests it again.
\\<arcology-oracle-links-mode-map>\\[arcology-oracle-links-unreject] \
takes the last rejection back; \\[arcology-oracle-link-rejections] lists them all."
  (interactive)
  (let* ((suggestion (arcology-oracle--result-at-point))
         (buffer (current-buffer))
         (from arcology-oracle--links-node)
         (to (alist-get 'node_id suggestion))
         (req nil))
    ;; Said at once: a daemon asleep answers after `arcology-oracle-timeout' at the earliest.
    (arcology-oracle--message "Rejecting %s…" (alist-get 'title suggestion))
    (setq
     req
     (arcology-oracle--json
      "POST" "/suggest-links/reject"
      :json `((from . ,from) (to . ,to))
      :errback (lambda (message)
                 ;; Sent, and no answer: the daemon may still record it once it answers.
                 (arcology-oracle--report
                  (if (and (arcology-oracle--http-connected req) (null (arcology-oracle--http-status req)))
                      (format "%s: the daemon may still record the rejection; %s shows the list as it is then"
                              message (substitute-command-keys
                                       "\\<arcology-oracle-links-mode-map>\\[arcology-oracle-links-refresh]"))
                    message)))
      :callback (lambda (_)
                  (arcology-oracle--links-remove buffer to t)
                  (when (buffer-live-p buffer)
                    (with-current-buffer buffer
                      (push suggestion arcology-oracle--links-rejected)))
                  (arcology-oracle--message (substitute-command-keys
                                             "Rejected %s for good: \\<arcology-oracle-links-mode-map>\\[arcology-oracle-links-unreject] \
takes it back, \\[arcology-oracle-link-rejections] lists the rejections")
                                            (alist-get 'title suggestion)))))))

(defun arcology-oracle--unreject (from to title &optional callback)
  "Forget the rejection of the link FROM -> TO (TITLE names TO); then CALLBACK.
Said at once, and a failure says that the rejection stands, or, sent
to a daemon that did not answer, that it may still be taken back."
  (let ((req nil))
    (arcology-oracle--message "Taking back the rejection of %s…" title)
    (setq req (arcology-oracle--json
               "DELETE" "/suggest-links/rejections"
               :query `(("from" ,from) ("to" ,to))
               :errback (lambda (message)
                          (arcology-oracle--report
                           (if (and (arcology-oracle--http-connected req) (null (arcology-oracle--http-status req)))
                               (format "%s: the daemon may still take back the rejection of %s" message title)
                             (format "The rejection of %s stands: %s" title message))))
               :callback (lambda (_)
                           (arcology-oracle--message "%s will be suggested again" title)
                           (when callback (funcall callback)))))))

(defun arcology-oracle-links-unreject ()
  "Take back the last rejection made in this buffer, and ask again."
  (interactive)
  (let ((suggestion (pop arcology-oracle--links-rejected))
        (buffer (current-buffer)))
    (unless suggestion (arcology-oracle--user-error "No rejection to take back here"))
    (arcology-oracle--unreject arcology-oracle--links-node (alist-get 'node_id suggestion)
                               (alist-get 'title suggestion)
                               (lambda () (when (buffer-live-p buffer)
                                            (with-current-buffer buffer
                                              (arcology-oracle-links-refresh)))))))

;;; Rejections

(defvar arcology-oracle-rejections-buffer-name "*arcology-oracle rejections*"
  "Name of the buffer listing rejected link suggestions.")

(defvar-local arcology-oracle--rejections-node nil
  "In the rejections buffer: the node whose rejections are listed, or nil for all.")

(defvar-local arcology-oracle--rejections-title nil
  "In the rejections buffer: the node's title as the note read, or nil.
Its header shows it until the daemon gives the title (and when the
daemon cannot be reached), rather than the node's ID.")

(defvar arcology-oracle-rejections-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'arcology-oracle-visit-result)
    (define-key map (kbd "u") #'arcology-oracle-rejections-undo)
    (define-key map (kbd "g") #'arcology-oracle-rejections-refresh)
    (define-key map (kbd "n") #'arcology-oracle-similar-next)
    (define-key map (kbd "p") #'arcology-oracle-similar-previous)
    ;; As in the other lists: else TAB was `indent-relative' ("Buffer is read-only").
    (define-key map (kbd "TAB") #'arcology-oracle-similar-next)
    (define-key map (kbd "<backtab>") #'arcology-oracle-similar-previous)
    map)
  "Keymap of the rejected link suggestions buffer.")

(define-derived-mode arcology-oracle-rejections-mode special-mode "Rejections"
  "Major mode listing the link suggestions rejected for good.
Each can be taken back, so that the daemon suggests it again.

\\{arcology-oracle-rejections-mode-map}"
  (setq-local revert-buffer-function (lambda (&rest _) (arcology-oracle-rejections-refresh)))
  (add-hook 'window-size-change-functions #'arcology-oracle--rejections-resized nil t))

(defvar-local arcology-oracle--rejections-shown nil
  "In the rejections buffer: (WIDTH ROWS TITLES), what it shows.
Laid out for a window WIDTH columns wide (nil: not shown); ROWS and
TITLES as `arcology-oracle--rejections-render' takes them.")

(defun arcology-oracle--rejections-resized (window)
  "Lay the rejections out again when WINDOW, showing them, changed its width.
Their header is filled to the window it was made for: a narrower one
wrapped it again at its edge with a backslash."
  (with-current-buffer (window-buffer window)
    (when (and arcology-oracle--rejections-shown
               (eq window (get-buffer-window (current-buffer) t))
               (not (eql (car arcology-oracle--rejections-shown) (window-width window))))
      (arcology-oracle--guard
        (let ((row (get-text-property (window-point window) 'arcology-oracle-result)))
          (apply #'arcology-oracle--rejections-render (cdr arcology-oracle--rejections-shown))
          ;; Point stays on its row, below a header of more or fewer lines now.
          (when-let ((pos (and row (arcology-oracle--result-start
                                    row (lambda (a b) (and (equal (alist-get 'node_id a) (alist-get 'node_id b))
                                                           (equal (alist-get 'from a) (alist-get 'from b))))))))
            (goto-char pos))
          (set-window-point window (point)))))))

(defun arcology-oracle--rejections-render (rows titles)
  "Fill the rejections buffer with ROWS (the daemon's) or a message string.
TITLES is a hash table of node ID to title."
  (with-current-buffer (get-buffer-create arcology-oracle-rejections-buffer-name)
    (unless (derived-mode-p 'arcology-oracle-rejections-mode) (arcology-oracle-rejections-mode))
    (let ((inhibit-read-only t) (line (line-number-at-pos)))
      (setq arcology-oracle--rejections-shown
            (list (when-let ((window (get-buffer-window (current-buffer) t))) (window-width window))
                  rows titles))
      (erase-buffer)
      ;; Filled to the window: a long title made the line wider than the
      ;; terminal, wrapped by Emacs at its edge.
      (arcology-oracle--insert-message
       (if arcology-oracle--rejections-node
           (concat "Rejected links from: "
                   (gethash arcology-oracle--rejections-node titles
                            (or arcology-oracle--rejections-title
                                arcology-oracle--rejections-node)))
         "Rejected link suggestions")
       nil 'bold)
      (insert (propertize (substitute-command-keys
                           "\\<arcology-oracle-rejections-mode-map>\\[arcology-oracle-rejections-undo]: \
suggest it again, \\[arcology-oracle-visit-result]: visit, \\[arcology-oracle-rejections-refresh]: ask again")
                          'face 'shadow)
              "\n\n")
      (cond ((stringp rows) (arcology-oracle--insert-message rows))
            ((null rows) (insert (propertize "No rejections." 'face 'shadow) "\n"))
            (t (dolist (row rows)
                 (let* ((to (alist-get 'to row))
                        (title (gethash to titles to))
                        (text (concat (propertize title 'face 'arcology-oracle-title)
                                      (unless arcology-oracle--rejections-node
                                        (propertize (concat "  from " (gethash (alist-get 'from row) titles
                                                                               (alist-get 'from row)))
                                                    'face 'arcology-oracle-olp))
                                      "\n")))
                   ;; Rows touch: each its own `arcology-oracle-entry' (not t), so that
                   ;; n and TAB see where one ends and the next begins.
                   (let ((result `((node_id . ,to) (title . ,title) (from . ,(alist-get 'from row)))))
                     (add-text-properties 0 (length text)
                                          `(arcology-oracle-entry ,result arcology-oracle-result ,result)
                                          text))
                   (insert text)))))
      (goto-char (point-min))
      (forward-line (1- line))
      (arcology-oracle--to-first-entry)
      (set-buffer-modified-p nil))))

(defun arcology-oracle--rejections-fetch ()
  "Ask the daemon for the rejections of the buffer's node, with their titles."
  (let ((node arcology-oracle--rejections-node)
        (titles (make-hash-table :test 'equal)))
    (arcology-oracle--json
     "GET" "/suggest-links/rejections" :query (when node `(("from" ,node)))
     :callback
     (lambda (answer)
       (let* ((rows (alist-get 'rejections answer))
              (ids (delete-dups (append (when node (list node))
                                        (mapcan (lambda (r) (list (alist-get 'from r) (alist-get 'to r)))
                                                rows))))
              (left (length ids)))
         (arcology-oracle--rejections-render rows titles)
         (dolist (id ids)
           (arcology-oracle--json
            "GET" (concat "/nodes/" (url-hexify-string id))
            :callback (lambda (n)
                        (when-let ((title (alist-get 'title n))) (puthash id title titles))
                        (when (zerop (cl-decf left)) (arcology-oracle--rejections-render rows titles)))
            :errback (lambda (_)
                       (when (zerop (cl-decf left)) (arcology-oracle--rejections-render rows titles)))))))
     :errback (lambda (message)
                (arcology-oracle--rejections-render message titles)
                (arcology-oracle--report message)))))

(defun arcology-oracle--rejections-node-here ()
  "Return (ID . TITLE) of the node at point in an Org buffer, or nil.
TITLE is nil when the node at point is not the one with ID."
  (when-let ((id (and (derived-mode-p 'org-mode) (org-entry-get nil "ID" t))))
    (let ((here (arcology-oracle--node-at-point)))
      (cons id (and (equal (car here) id) (cdr here))))))

;;;###autoload
(defun arcology-oracle-link-rejections (&optional all)
  "List the link suggestions rejected for the note at point, to take some back.
In the suggestions buffer, those of its note; in the similar notes
and the org-roam buffer, those of the note they are about (see
`arcology-oracle--listed-note'); with a prefix argument ALL, or
outside any note, every rejection."
  (interactive "P")
  (pcase-let ((`(,node . ,title)
              (unless all
                (cond ((derived-mode-p 'arcology-oracle-links-mode)
                       (cons arcology-oracle--links-node (arcology-oracle--links-title)))
                      ((arcology-oracle--listed-note)
                       (let ((here nil))
                         (arcology-oracle--in-listed-note
                          (lambda () (setq here (arcology-oracle--rejections-node-here))))
                         here))
                      (t (arcology-oracle--rejections-node-here))))))
    (with-current-buffer (get-buffer-create arcology-oracle-rejections-buffer-name)
      (arcology-oracle-rejections-mode)
      (setq arcology-oracle--rejections-node node
            arcology-oracle--rejections-title title)
      (arcology-oracle--rejections-render "Looking for rejections…" (make-hash-table))
      (arcology-oracle--rejections-fetch))
    (arcology-oracle--display (get-buffer arcology-oracle-rejections-buffer-name)
                              arcology-oracle-result-display-action t)))

(defun arcology-oracle-rejections-refresh ()
  "Ask the daemon again for the rejections listed.
The list says so until the answer comes (a daemon asleep answers
only after `arcology-oracle-timeout')."
  (interactive)
  (arcology-oracle--rejections-render "Asking the daemon again…" (make-hash-table :test 'equal))
  (arcology-oracle--rejections-fetch))

(defun arcology-oracle-rejections-undo ()
  "Take back the rejection at point: the daemon may suggest that link again."
  (interactive)
  (let ((row (arcology-oracle--result-at-point))
        (buffer (current-buffer)))
    (arcology-oracle--unreject (alist-get 'from row) (alist-get 'node_id row) (alist-get 'title row)
                               (lambda () (when (buffer-live-p buffer)
                                            (with-current-buffer buffer
                                              (arcology-oracle--rejections-fetch)))))))

(provide 'arcology-oracle-rejections)

;;; arcology-oracle-rejections.el ends here
