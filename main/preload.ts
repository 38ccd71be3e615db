import { contextBridge, ipcRenderer } from 'electron';
import { createPreloadApi } from './preload-api.js';

// The only thing the page gets: window.terminal, a TerminalApi (renderer/src/client.ts picks it up).
contextBridge.exposeInMainWorld('terminal', createPreloadApi(ipcRenderer));
